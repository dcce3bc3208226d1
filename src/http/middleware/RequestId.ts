import { newUuid7 } from "../../../services/platform/Ids"

// Printable ASCII only: anything else could smuggle control bytes into logs and headers.
const printable = /^[\x20-\x7e]{1,128}$/

/** A caller's `X-Request-Id` of at most 128 printable bytes is echoed; otherwise a fresh UUIDv7. */
export const resolveRequestId = (header: string | undefined): string =>
  header !== undefined && printable.test(header) ? header : newUuid7()
