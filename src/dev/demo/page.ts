/**
 * The demo page: plain HTML and a script that uses the browser build (`window.EchoMercure`).
 */
export function demoPage(): string {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>laravel-echo-mercure demo</title>
<link rel="icon" href="data:,">
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1f2328; background: #f6f8fa; }
  header { background: #1f2328; color: #fff; padding: 14px 24px; display: flex; gap: 16px; align-items: center; flex-wrap: wrap; }
  header h1 { font-size: 18px; margin: 0; flex: 1; }
  main { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 16px; padding: 16px 24px; }
  section { background: #fff; border: 1px solid #d0d7de; border-radius: 8px; padding: 12px 16px; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  ol { margin: 0; padding: 0; list-style: none; max-height: 260px; overflow: auto; font-family: ui-monospace, monospace; font-size: 13px; }
  li { padding: 2px 0; border-bottom: 1px solid #eaeef2; }
  .status { padding: 2px 10px; border-radius: 12px; background: #6e7781; }
  .status[data-status="connected"] { background: #1a7f37; }
  .status[data-status="connecting"], .status[data-status="reconnecting"] { background: #9a6700; }
  .status[data-status="failed"] { background: #cf222e; }
  form { display: flex; gap: 8px; flex-wrap: wrap; margin-top: 8px; }
  input, select, button { font: inherit; padding: 4px 8px; }
  .error { color: #cf222e; }
  code { background: #eaeef2; padding: 0 4px; border-radius: 4px; }
  header code { background: #32383f; color: #fff; }
</style>
</head>
<body>
<header>
  <h1>laravel-echo-mercure demo</h1>
  <label>User <select id="user"><option value="1">Ann (1)</option><option value="2">Ben (2)</option><option value="3">Cho (3)</option></select></label>
  <span>socket <code id="socket"></code></span>
  <span class="status" id="status" data-status="disconnected">disconnected</span>
</header>
<main>
  <section>
    <h2>Public channel <code>feed</code> · <code>listen("PostPublished")</code></h2>
    <ol id="feed"></ol>
    <form id="post"><input id="post-text" value="Hello, Mercure" size="24"><label><input type="checkbox" id="to-others"> toOthers()</label><button>Broadcast to feed</button></form>
  </section>
  <section>
    <h2>Private channel <code id="private-name"></code> · <code>notification()</code></h2>
    <ol id="private"></ol>
    <form id="notify"><select id="notify-user"><option value="1">to Ann</option><option value="2">to Ben</option><option value="3">to Cho</option></select><input id="notify-text" value="Your order shipped" size="20"><button>Send notification</button></form>
  </section>
  <section>
    <h2>Errors and status changes</h2>
    <ol id="log"></ol>
    <form id="trespass"><button>Listen to another user's private channel</button> <small>(denied: see the error)</small></form>
  </section>
</main>
<script src="/dist/laravel-echo-mercure.iife.js"></script>
<script>
  const { MercureEcho } = window.EchoMercure;
  const $ = (id) => document.getElementById(id);
  const add = (list, text, cls) => { const li = document.createElement("li"); li.textContent = new Date().toLocaleTimeString() + "  " + text; if (cls) li.className = cls; $(list).prepend(li); };
  const userId = new URLSearchParams(location.search).get("user") || "1";
  $("user").value = userId;
  $("user").onchange = () => { location.search = "?user=" + $("user").value; };

  async function main() {
    await fetch("/dev/login?user=" + encodeURIComponent(userId), { method: "POST", credentials: "include" });
    const echo = new MercureEcho({ host: "/.well-known/mercure" });
    window.echo = echo;
    $("socket").textContent = echo.socketId();
    echo.connector.onConnectionChange((status) => {
      $("status").textContent = status; $("status").dataset.status = status; add("log", "status: " + status);
    });
    echo.channel("feed")
      .listen("PostPublished", (e) => add("feed", e.author + ": " + e.text))
      .error((error) => add("log", error.code + ": " + error.message, "error"));
    const privateName = "App.Models.User." + userId;
    $("private-name").textContent = "private-" + privateName;
    echo.private(privateName)
      .notification((n) => add("private", n.type + ": " + n.text))
      .subscribed(() => add("log", "subscribed to private-" + privateName))
      .error((error) => add("log", error.code + ": " + error.message, "error"));

    $("trespass").onsubmit = (event) => {
      event.preventDefault();
      const other = userId === "1" ? "2" : "1";
      echo.private("App.Models.User." + other)
        .notification((n) => add("private", "LEAK: " + n.text, "error"))
        .error((error) => add("log", error.code + ": " + error.message, "error"));
    };
    // Echo's interceptors add X-Socket-ID to axios, jQuery, Vue resource and Turbo requests; with fetch, add it
    // yourself. The server's toOthers() reads it, as Laravel's does.
    const broadcast = (body) => fetch("/dev/broadcast", { method: "POST", headers: { "Content-Type": "application/json", "X-Socket-ID": echo.socketId() }, body: JSON.stringify(body) });
    $("post").onsubmit = (event) => {
      event.preventDefault();
      broadcast({ channels: ["feed"], event: "App\\\\Events\\\\PostPublished", payload: { author: "user " + userId, text: $("post-text").value }, toOthers: $("to-others").checked });
    };
    $("notify").onsubmit = (event) => {
      event.preventDefault();
      broadcast({ channels: ["private-App.Models.User." + $("notify-user").value], event: "Illuminate\\\\Notifications\\\\Events\\\\BroadcastNotificationCreated", payload: { id: crypto.randomUUID(), type: "OrderShipped", text: $("notify-text").value } });
    };
  }
  main().catch((error) => add("log", String(error), "error"));
</script>
</body>
</html>
`;
}
