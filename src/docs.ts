import { readFileSync, writeFileSync } from "node:fs"
import { statechartMermaid, statusValues, transitionTableMarkdown } from "../machines/step"
import { errorTableMarkdown } from "./api/Errors"

/** Regenerates the README's generated sections (lifecycle and error table); tests fail when they drift. */
const p = new URL("../README.md", import.meta.url)
let s = readFileSync(p, "utf8")
const block = `<!-- lifecycle:start -->
Statuses (the machine's top-level states): ${statusValues.map((v) => `\`${v}\``).join(", ")}.

\`\`\`mermaid
${statechartMermaid()}
\`\`\`

${transitionTableMarkdown()}
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
