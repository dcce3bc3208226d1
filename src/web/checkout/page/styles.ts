/** The checkout's stylesheet: one column from 360 px up, system fonts, visible focus, no external resources. */
export const styles = `
:root { color-scheme: light dark; --bg: #ffffff; --on-accent: #ffffff; --ink: #1b1d21; --muted: #5b6270; --line: #d7dbe2; --accent: #0b57d0; --bad: #b3261e; --ok: #1e7a3c; }
@media (prefers-color-scheme: dark) { :root { --bg: #15171b; --on-accent: #0d1b2e; --ink: #eceef2; --muted: #a8afbd; --line: #3a3f4a; --accent: #8ab4f8; --bad: #f2b8b5; --ok: #7fd49a; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: var(--bg); }
.top { max-width: 32rem; margin: 0 auto; padding: 0.75rem 1rem 0; display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; justify-content: space-between; }
.badge { margin: 0; padding: 0.25rem 0.6rem; border-radius: 0.4rem; background: #fbe7a1; color: #3d2e00; font-size: 0.85rem; font-weight: 600; }
.language { display: flex; gap: 0.4rem; align-items: center; margin-left: auto; font-size: 0.9rem; }
.language label { color: var(--muted); }
select { font: inherit; padding: 0.4rem 0.5rem; border: 1px solid var(--line); border-radius: 0.4rem; min-height: 44px; background: transparent; color: inherit; }
main { max-width: 32rem; margin: 0 auto; padding: 0.75rem 1rem 3rem; }
h1 { font-size: 1.35rem; margin: 0.25rem 0 1rem; }
.issuer { color: var(--muted); margin: 0; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; margin: 0 0 1rem; }
dt { color: var(--muted); } dd { margin: 0; font-variant-numeric: tabular-nums; text-align: right; }
section { border-top: 1px solid var(--line); padding: 1rem 0; }
button { font: inherit; padding: 0.65rem 1rem; border-radius: 0.5rem; border: 1px solid var(--accent); background: var(--accent); color: var(--on-accent); cursor: pointer; min-height: 44px; }
button.secondary { background: transparent; color: var(--accent); }
button:disabled { opacity: 0.55; cursor: not-allowed; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
input { font: inherit; padding: 0.6rem; border: 1px solid var(--line); border-radius: 0.5rem; width: 9rem; letter-spacing: 0.2em; }
.address { font-family: ui-monospace, monospace; word-break: break-all; }
#qr svg, #phone-qr svg { width: 12rem; height: 12rem; display: block; margin: 0.5rem 0; background: #fff; }
a { color: var(--accent); }
.reason { color: var(--muted); font-size: 0.9rem; margin: 0.5rem 0 0; }
.reason:empty { display: none; }
#receipt ul { list-style: none; padding: 0; margin: 0 0 1rem; }
#receipt-tx-title { color: var(--muted); margin: 0; }
#returns .address { display: block; }
#status { min-height: 1.5rem; font-weight: 600; }
#status[data-tone="error"] { color: var(--bad); }
body[data-status="settled"] #state { color: var(--ok); font-weight: 600; }
#way-back { margin: 1rem 0 0; }
#way-back[data-tone="quiet"] { font-size: 0.9rem; }
#way-back[data-tone="quiet"] a { color: var(--muted); }
#wallets { border: 0; padding: 0; margin: 0 0 1rem; }
#wallets legend { color: var(--muted); padding: 0; margin-bottom: 0.25rem; }
.wallet { display: flex; gap: 0.6rem; align-items: center; min-height: 44px; cursor: pointer; }
.wallet input { width: 1.2rem; height: 1.2rem; margin: 0; accent-color: var(--accent); }
.wallet img { width: 28px; height: 28px; border-radius: 0.3rem; }
#app-links { list-style: none; padding: 0; margin: 0 0 1rem; display: grid; gap: 0.5rem; }
#app-links a { display: flex; align-items: center; min-height: 44px; padding: 0.5rem 1rem; border: 1px solid var(--accent); border-radius: 0.5rem; font-weight: 600; text-decoration: none; }
h1[tabindex], h2[tabindex] { scroll-margin-top: 1rem; }
.row { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; }
[hidden] { display: none !important; }
`
