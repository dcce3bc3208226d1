import { readFileSync, writeFileSync } from "node:fs"
import { statechartMermaid, statusValues, transitionsDocument } from "../../machines/step"
import { errorTableMarkdown } from "../http/Errors"

/**
 * Regenerates the README's generated sections (lifecycle and error table) and the machine's transition table
 * (machines/TRANSITIONS.md, linked from the README); tests fail when they drift.
 */
const transitions = new URL("../../machines/TRANSITIONS.md", import.meta.url)
writeFileSync(transitions, transitionsDocument())
const p = new URL("../../README.md", import.meta.url)
let s = readFileSync(p, "utf8")
const block = `<!-- lifecycle:start -->
Statuses (the machine's top-level states): ${statusValues.map((v) => `\`${v}\``).join(", ")}.

\`\`\`mermaid
${statechartMermaid()}
\`\`\`

Every transition, with its guard and the named actions it runs: [machines/TRANSITIONS.md](machines/TRANSITIONS.md).
<!-- lifecycle:end -->`
if (s.includes("<!-- lifecycle:start -->"))
  s = s.replace(/<!-- lifecycle:start -->[\s\S]*<!-- lifecycle:end -->/, block)
else
  s = s.replace(
    "## Errors",
    `## Deposit request lifecycle\n\nGenerated from \`machines/DepositRequest.ts\` (a test fails when this section drifts from the machine; regenerate with \`npm run docs\`).\n\n${block}\n\n## Errors`
  )
s = s.replace(
  /<!-- errors:start -->[\s\S]*<!-- errors:end -->/,
  `<!-- errors:start -->\n${errorTableMarkdown()}\n<!-- errors:end -->`
)
writeFileSync(p, s)
