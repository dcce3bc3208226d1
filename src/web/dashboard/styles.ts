/** The dashboard's stylesheet: one column at 360 px, a wider layout from 48rem, system fonts, visible focus. */
export const dashboardStyles = `
:root { color-scheme: light dark; --ink: #1b1d21; --muted: #5b6270; --line: #d7dbe2; --accent: #0b57d0; --bad: #b3261e; --ok: #1e7a3c; --warn: #8a5300; --soft: #f3f5f9; }
@media (prefers-color-scheme: dark) { :root { --ink: #eceef2; --muted: #a8afbd; --line: #3a3f4a; --accent: #8ab4f8; --bad: #f2b8b5; --ok: #7fd49a; --warn: #f4c27a; --soft: #22252b; } }
* { box-sizing: border-box; }
html { background: Canvas; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); }
header.top { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: center; padding: 0.75rem 1rem; border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; margin-right: auto; }
.env { font-weight: 700; padding: 0.15rem 0.6rem; border-radius: 1rem; border: 2px solid currentColor; }
.env[data-env="sandbox"] { color: var(--warn); }
.env[data-env="production"] { color: var(--ok); }
nav.views ul { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 0.75rem; margin: 0; padding: 0.5rem 1rem; border-bottom: 1px solid var(--line); }
nav.views a { display: inline-block; padding: 0.4rem 0.2rem; min-height: 44px; line-height: 2; }
nav.views a[aria-current="page"] { font-weight: 700; text-decoration: underline 3px; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem 1rem 3rem; overflow-wrap: anywhere; }
h1 { font-size: 1.4rem; margin: 0.25rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 0.5rem; }
h3 { font-size: 1rem; margin: 1rem 0 0.5rem; }
h1:focus { outline: none; }
section { border-top: 1px solid var(--line); padding: 0.5rem 0 1rem; }
a { color: var(--accent); }
button { font: inherit; padding: 0.55rem 0.9rem; border-radius: 0.5rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; min-height: 44px; }
@media (prefers-color-scheme: dark) { button { color: #10131a; } }
button.secondary { background: transparent; color: var(--accent); }
button.danger { background: transparent; color: var(--bad); border-color: var(--bad); }
button:disabled { opacity: 0.55; cursor: not-allowed; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
input, select, textarea { font: inherit; padding: 0.5rem; border: 1px solid var(--muted); border-radius: 0.5rem; max-width: 100%; background: transparent; color: inherit; }
textarea { width: 100%; min-height: 4rem; font-family: ui-monospace, monospace; }
form.grid { display: grid; grid-template-columns: 1fr; gap: 0.75rem; max-width: 40rem; }
form.grid label, .field label { display: block; font-weight: 600; }
.field input, .field select { width: 100%; }
.hint { color: var(--muted); font-size: 0.9rem; margin: 0.15rem 0 0; }
.row { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: flex-end; }
.row .field { flex: 1 1 10rem; }
.mono, code { font-family: ui-monospace, monospace; word-break: break-all; }
.scroll { overflow-x: auto; max-width: 100%; position: relative; }
table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
th, td { text-align: left; padding: 0.45rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
dl.facts { display: grid; grid-template-columns: minmax(8rem, auto) 1fr; gap: 0.25rem 1rem; margin: 0 0 1rem; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; word-break: break-word; }
.amounts { display: grid; grid-template-columns: repeat(auto-fit, minmax(9rem, 1fr)); gap: 0.5rem; margin: 0 0 1rem; }
.amounts div { border: 1px solid var(--line); border-radius: 0.5rem; padding: 0.5rem 0.75rem; }
.amounts dt { color: var(--muted); font-size: 0.9rem; } .amounts dd { margin: 0; font-size: 1.15rem; font-variant-numeric: tabular-nums; }
.status { display: inline-block; padding: 0 0.5rem; border-radius: 0.75rem; border: 1px solid var(--line); white-space: nowrap; }
.status[data-status="settled"] { color: var(--ok); border-color: var(--ok); }
.status[data-status="needs_attention"] { color: var(--bad); border-color: var(--bad); }
.refusal { color: var(--bad); font-weight: 600; margin: 0.5rem 0; }
.notice { color: var(--ok); font-weight: 600; margin: 0.5rem 0; }
.secret { background: var(--soft); border: 1px solid var(--line); border-radius: 0.5rem; padding: 0.75rem; margin: 0.5rem 0; }
.secret p { margin: 0 0 0.5rem; }
ul.plain { list-style: none; padding: 0; margin: 0; }
ul.plain li { border-bottom: 1px solid var(--line); padding: 0.5rem 0; }
ol.timeline { padding-left: 1.25rem; }
ol.timeline li { margin: 0 0 0.35rem; }
tr[data-outcome="failed"] td { color: var(--bad); }
table.errors tr:target { background: var(--soft); outline: 3px solid var(--accent); outline-offset: -3px; }
table.errors tr { scroll-margin-top: 1rem; }
a.brand { color: inherit; text-decoration: none; }
.confirm { border: 2px solid var(--bad); border-radius: 0.5rem; padding: 0.75rem; margin: 0.5rem 0; }
.signin { max-width: 26rem; margin: 2rem auto; }
.signin form { margin: 0 0 1rem; }
.signin input { width: 100%; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (min-width: 48rem) { form.grid { grid-template-columns: 1fr 1fr; } form.grid .wide { grid-column: 1 / -1; } }
[hidden] { display: none !important; }
svg.machine { display: block; font-family: ui-monospace, monospace; max-width: none; }
svg.machine .state rect { fill: Canvas; stroke: var(--muted); stroke-width: 1.5; }
svg.machine .state.compound > rect, svg.machine .state.parallel > rect { fill: transparent; stroke-dasharray: 6 3; }
svg.machine .state text { font-size: 13px; font-weight: 600; fill: var(--ink); }
svg.machine .state.active > rect { fill: var(--soft); stroke: var(--accent); stroke-width: 4; }
svg.machine .state.active text { fill: var(--accent); }
svg.machine .state.previous > rect { stroke: var(--accent); stroke-width: 2; stroke-dasharray: 5 3; }
svg.machine .transition path, svg.machine .initial path { fill: none; stroke: var(--muted); stroke-width: 1.2; }
svg.machine .arrowhead { fill: var(--muted); }
svg.machine .arrowhead.taken { fill: var(--accent); }
svg.machine .initial circle { fill: var(--ink); }
svg.machine .transition .label { fill: Canvas; stroke: none; }
svg.machine .transition text { font-size: 11px; fill: var(--ink); }
svg.machine .transition .guard { fill: var(--muted); }
svg.machine .transition.taken path { stroke: var(--accent); stroke-width: 3; }
svg.machine .transition.taken .label { stroke: var(--accent); stroke-width: 1.5; }
svg.machine .transition.taken text, svg.machine .transition.taken .guard { fill: var(--accent); font-weight: 700; }
.drawing { overflow: hidden; touch-action: none; cursor: grab; border: 1px solid var(--muted); border-radius: 0.5rem; }
.drawing:active { cursor: grabbing; }
svg.machine .transition:focus, svg.machine .group-label:focus { outline: none; }
svg.machine .transition.hot path, svg.machine .group.hot > path { stroke: var(--accent); stroke-width: 3; }
svg.machine .transition.hot .label, svg.machine .group.hot .label { stroke: var(--accent); stroke-width: 2; }
svg.machine .transition.hot text, svg.machine .transition.hot .guard { fill: var(--accent); font-weight: 700; }
svg.machine .transition:focus-visible .label, svg.machine .group-label:focus-visible .label { stroke: var(--ink); stroke-width: 3; }
svg.machine .transition.member path { stroke-dasharray: 4 3; }
svg.machine .group > path { fill: none; stroke: var(--muted); stroke-width: 1.6; }
svg.machine .group .junction { fill: var(--muted); }
svg.machine .group .label { fill: Canvas; stroke: var(--muted); stroke-width: 1; }
svg.machine .group text { font-size: 11px; fill: var(--ink); }
svg.machine .group .guard { fill: var(--muted); }
svg.machine .group-label { cursor: pointer; }
svg.machine .group.taken > path { stroke: var(--accent); stroke-width: 3; }
svg.timeline { display: block; max-width: 60rem; }
svg.timeline .axis { stroke: var(--muted); stroke-width: 2; }
svg.timeline .tick circle { fill: Canvas; stroke: var(--ink); stroke-width: 2; cursor: pointer; }
svg.timeline .tick.paused circle { stroke: var(--bad); stroke-width: 3; }
svg.timeline .tick.current circle { fill: var(--accent); stroke: var(--accent); }
svg.timeline .tick:focus { outline: none; }
svg.timeline .tick:focus-visible circle { stroke-width: 4; }
#context-changes tr[data-change=added] td:first-child { color: var(--ok); font-weight: 600; }
#context-changes tr[data-change=removed] td:first-child { color: var(--bad); font-weight: 600; }
fieldset.history { border: 0; padding: 0; margin: 0.5rem 0 0; }
fieldset.events { border: 1px solid var(--line); margin: 0.5rem 0; }
fieldset.events label { display: block; min-height: 44px; }
pre.wire { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 24rem; overflow: auto; }
ol.steps { padding-left: 0; list-style: none; }
ol.steps li { border-bottom: 1px solid var(--line); padding: 0.25rem 0; }
ol.steps li[aria-current="step"] { background: var(--soft); }
button.link { background: transparent; border: 0; color: var(--accent); padding: 0.25rem 0; text-align: left; text-decoration: underline; min-height: 44px; }
pre { margin: 0; font-size: 0.85rem; }
.tiles { display: grid; grid-template-columns: 1fr; gap: 0 1rem; }
@media (min-width: 48rem) { .tiles { grid-template-columns: repeat(3, 1fr); } }
svg.chart { display: block; width: 100%; height: 8rem; }
svg.chart rect.track { fill: var(--soft); }
svg.chart rect.bar { fill: var(--accent); }
`
