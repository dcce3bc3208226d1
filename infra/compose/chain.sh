#!/bin/sh
# The compose stack's local chain: the anvil binary the project pins (@foundry-rs/anvil), chain 10143, a block a
# second, `finalized` 4 blocks behind, listening on all interfaces for the other services.
set -eu
exec "$(node -p 'require.resolve("@foundry-rs/anvil-linux-amd64/bin/anvil")')" \
  --host "${ANVIL_HOST:-0.0.0.0}" --port "${ANVIL_PORT:-8545}" --chain-id 10143 --block-time 1 \
  --slots-in-an-epoch 2 --prune-history 300
