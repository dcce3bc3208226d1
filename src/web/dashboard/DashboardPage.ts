/**
 * The dashboard's HTML: an empty shell the script fills (Preact), a heading and a notice for a browser without
 * JavaScript. Everything it loads is on this origin.
 */
export const dashboardHtml = (sandbox: boolean) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Deposits dashboard</title>
<link rel="icon" href="/favicon.ico" sizes="32x32">
<link rel="stylesheet" href="/dashboard/assets/app.css">
<script src="/dashboard/assets/app.js" defer></script>
</head>
<body${sandbox ? ' data-sandbox="true"' : ""}>
<div id="app"><main><h1>Deposits dashboard</h1><noscript><p>The dashboard needs JavaScript.</p></noscript></main></div>
</body>
</html>
`
