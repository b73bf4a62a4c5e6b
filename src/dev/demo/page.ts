/** The demo's end-to-end encrypted channel, open to every demo user. */
export const DEMO_ENCRYPTED_CHANNEL = "private-encrypted-chat";

/** The demo's private channel where users whisper that they are typing (the same `chat` authorization). */
export const DEMO_WHISPER_CHANNEL = "private-chat";

/** How long "… is typing" stays after the last whisper, and the least time between two whispers of one user. */
const TYPING_MS = 3_000;
const WHISPER_EVERY_MS = 1_000;

/**
 * The demo page: plain HTML and a script that uses the browser build (`window.EchoMercure`).
 *
 * Next to each message of the encrypted channel it shows what the hub carried for it: the page hands Echo an
 * `EventSource` that records every envelope the hub sends before the connector reads it. The connector
 * settles the encrypted channel's events one by one in order of arrival (delivered, or reported on
 * `error()`), and drops the copies a stream reopen delivers twice, so the n-th distinct envelope recorded
 * is the one behind the n-th message or error. `hubPath` is where the dev server serves the hub; `hubLink` is the
 * `<link rel="mercure" last-event-id="…">` the app rendered (see `RenderedPage`): the connector starts from its id, so
 * what is broadcast while the page loads (a reload, a redirect) still arrives.
 */
export function demoPage(hubPath = "/.well-known/mercure", hubLink = ""): string {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>laravel-echo-mercure demo</title>
<link rel="icon" href="data:,">
${hubLink}
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
  #encrypted { max-height: 420px; }
  .carried { color: #57606a; font-size: 11px; overflow-wrap: anywhere; white-space: normal; }
  .carried b { color: #1f2328; font-weight: 600; }
  .replaced { background: #fff8c5; border: 1px solid #d4a72c; padding: 8px 12px; margin: 8px 16px; }
  code { background: #eaeef2; padding: 0 4px; border-radius: 4px; }
  ul.online { margin: 0 0 8px; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 6px; min-height: 28px; }
  ul.online li { border: 1px solid #1a7f37; color: #1a7f37; border-radius: 14px; padding: 2px 10px; }
  ul.online li::before { content: "● "; }
  header code { background: #32383f; color: #fff; }
  .typing { min-height: 22px; margin: 4px 0; color: #57606a; font-style: italic; }
  #chat-text { flex: 1; min-width: 0; }
</style>
</head>
<body>
<header>
  <h1>laravel-echo-mercure demo</h1>
  <label>User <select id="user"><option value="1">Ann (1)</option><option value="2">Ben (2)</option><option value="3">Cho (3)</option></select></label>
  <span>socket <code id="socket"></code></span>
  <span class="status" id="status" data-status="disconnected">disconnected</span>
</header>
<p id="replaced" class="replaced" hidden></p>
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
    <h2>Encrypted channel <code>${DEMO_ENCRYPTED_CHANNEL}</code> · decrypted by Echo, next to what the hub carried</h2>
    <ol id="encrypted"></ol>
    <form id="secret"><input id="secret-text" value="Only our browsers can read this" size="28"><button>Send encrypted</button></form>
    <h2>Presence channel <code>presence-lobby</code> · who is online</h2>
    <ul class="online" id="online"></ul>
    <ol id="presence"></ol>
    <form id="lobby"><button id="lobby-button">Leave the lobby</button> <small>(open <code>?user=2</code> in a private window or another browser: the windows of one browser share one login)</small></form>
  </section>
  <section>
    <h2>Private channel <code>${DEMO_WHISPER_CHANNEL}</code> · whispers: someone is typing…</h2>
    <p class="typing" id="typing" aria-live="polite"></p>
    <form id="chat"><input id="chat-text" placeholder="Type here: the others see it" autocomplete="off"><button>Clear</button></form>
    <small>Client events go from browser to browser through the hub (<code>whisper("typing")</code>, <code>listenForWhisper("typing")</code>); Laravel never sees them. Open <code>?user=2</code> in a private window or another browser and type in one of them.</small>
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

  // One browser holds one session cookie for all its windows: a login in another window replaces this page's user.
  async function checkUser() {
    const body = await (await fetch("/dev/user", { credentials: "include" })).json();
    const other = body.user === null || String(body.user.id) !== userId;
    $("replaced").hidden = !other;
    if (other) $("replaced").textContent = "Another window of this browser logged in as " + (body.user === null ? "nobody" : "user " + body.user.id) + ", which replaced user " + userId + " here (one browser, one session cookie). To be two users at once, open ?user=2 in a private window or another browser; reload to log in as user " + userId + " again.";
  }
  setInterval(() => { checkUser().catch(() => {}); }, 2000);
  document.addEventListener("visibilitychange", () => { checkUser().catch(() => {}); });

  async function main() {
    await fetch("/dev/login?user=" + encodeURIComponent(userId), { method: "POST", credentials: "include" });
    // Records each envelope the hub sends, before the connector reads it: what the hub carried.
    const carried = [];
    const seen = new Set();
    class RecordingEventSource extends EventSource {
      set onmessage(handler) {
        super.onmessage = handler === null ? null : (event) => { record(event); handler.call(this, event); };
      }
      get onmessage() { return super.onmessage; }
    }
    const record = (event) => {
      let envelope = null;
      try { envelope = JSON.parse(event.data); } catch {}
      // As the connector routes (laravel-mercure §4.4): a string data is an encrypted update; an id delivered twice (a reopen) counts once.
      if (!envelope || typeof envelope.data !== "string" || !Array.isArray(envelope.channels) || !envelope.channels.includes(${JSON.stringify(DEMO_ENCRYPTED_CHANNEL)})) return;
      if (event.lastEventId !== "" && seen.has(event.lastEventId)) return;
      seen.add(event.lastEventId);
      carried.push({ id: event.lastEventId, data: event.data });
    };
    const showEncrypted = (text, cls) => {
      const hub = carried.shift();
      add("encrypted", text, cls);
      const detail = document.createElement("div");
      detail.className = "carried";
      const label = document.createElement("b");
      label.textContent = "hub carried " + (hub ? hub.id : "?") + ": ";
      detail.append(label, hub ? hub.data : "(nothing recorded)");
      $("encrypted").firstChild.append(detail);
    };
    const echo = new MercureEcho({ host: ${JSON.stringify(hubPath)}, eventSource: RecordingEventSource });
    window.echo = echo;
    const rendered = document.querySelector('head > link[rel="mercure"]')?.getAttribute("last-event-id");
    if (rendered) add("log", "page rendered at hub event " + rendered + ": what is broadcast from then on arrives");
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

    echo.encryptedPrivate(${JSON.stringify(DEMO_ENCRYPTED_CHANNEL.slice("private-encrypted-".length))})
      .listen("SecretMessage", (e) => showEncrypted(e.author + ": " + e.text))
      .error((error) => {
        if (error.code === "decrypt_failed") showEncrypted(error.code + ": " + error.message, "error");
        add("log", error.code + ": " + error.message, "error");
      });
    // Who is online: here() gives everyone once the room is known, then joining()/leaving() one user at a time
    // (one entry per user, however many tabs they have open).
    const online = new Map();
    const showOnline = () => $("online").replaceChildren(...[...online.values()].map((member) => {
      const li = document.createElement("li");
      li.textContent = member.name + (String(member.id) === userId ? " (you)" : "");
      return li;
    }));
    const enterLobby = () => echo.join("lobby")
      .here((members) => { online.clear(); members.forEach((m) => online.set(m.id, m)); showOnline(); add("presence", "here: " + members.map((m) => m.name).join(", ")); })
      .joining((member) => { online.set(member.id, member); showOnline(); add("presence", member.name + " joined"); })
      .leaving((member) => { online.delete(member.id); showOnline(); add("presence", member.name + " left"); })
      .error((error) => add("log", error.code + ": " + error.message, "error"));
    enterLobby();
    $("lobby").onsubmit = (event) => {
      event.preventDefault();
      if (echo.connector.channels["presence-lobby"]) {
        echo.leave("lobby");
        online.clear(); showOnline(); add("presence", "you left the lobby");
        $("lobby-button").textContent = "Enter the lobby";
      } else {
        enterLobby();
        $("lobby-button").textContent = "Leave the lobby";
      }
    };

    // Whispers: "typing" at most once a second while the user types, "stopped" when the field is cleared; the others
    // show who is typing until ${TYPING_MS / 1000} s after that user's last whisper. The connector drops our own whispers.
    const myName = $("user").selectedOptions[0].textContent.replace(/ \\(\\d+\\)$/, "");
    const typing = new Map();
    const showTyping = () => {
      const names = [...typing.keys()];
      $("typing").textContent = names.length === 0 ? "" : names.join(" and ") + (names.length === 1 ? " is" : " are") + " typing…";
    };
    const stopTyping = (name) => { clearTimeout(typing.get(name)); typing.delete(name); showTyping(); };
    const chat = echo.private(${JSON.stringify(DEMO_WHISPER_CHANNEL.slice("private-".length))})
      .listenForWhisper("typing", (e) => {
        clearTimeout(typing.get(e.name));
        typing.set(e.name, setTimeout(() => stopTyping(e.name), ${TYPING_MS}));
        showTyping();
      })
      .listenForWhisper("stopped", (e) => stopTyping(e.name))
      .error((error) => add("log", error.code + ": " + error.message, "error"));
    let lastWhisper = 0;
    $("chat-text").oninput = () => {
      if ($("chat-text").value === "") { lastWhisper = 0; chat.whisper("stopped", { name: myName }); return; }
      if (Date.now() - lastWhisper < ${WHISPER_EVERY_MS}) return;
      lastWhisper = Date.now();
      chat.whisper("typing", { name: myName });
    };
    $("chat").onsubmit = (event) => {
      event.preventDefault();
      $("chat-text").value = "";
      $("chat-text").oninput();
    };

    $("trespass").onsubmit = (event) => {
      event.preventDefault();
      const other = userId === "1" ? "2" : "1";
      echo.private("App.Models.User." + other)
        .notification((n) => add("private", "LEAK: " + n.text, "error"))
        .error((error) => add("log", error.code + ": " + error.message, "error"));
    };
    // Echo's interceptors add X-Socket-ID to axios, jQuery, Vue resource and Turbo requests; with fetch, add it
    // yourself. The server's toOthers() reads it, as Laravel's does.
    // A publish the hub refused answers 502 with the reason: show it.
    const broadcast = (body) => fetch("/dev/broadcast", { method: "POST", headers: { "Content-Type": "application/json", "X-Socket-ID": echo.socketId() }, body: JSON.stringify(body) })
      .then(async (response) => { if (!response.ok) add("log", "broadcast failed (" + response.status + "): " + ((await response.json().catch(() => null))?.message ?? ""), "error"); })
      .catch((error) => add("log", "broadcast failed: " + error, "error"));
    $("post").onsubmit = (event) => {
      event.preventDefault();
      broadcast({ channels: ["feed"], event: "App\\\\Events\\\\PostPublished", payload: { author: "user " + userId, text: $("post-text").value }, toOthers: $("to-others").checked });
    };
    $("secret").onsubmit = (event) => {
      event.preventDefault();
      broadcast({ channels: [${JSON.stringify(DEMO_ENCRYPTED_CHANNEL)}], event: "App\\\\Events\\\\SecretMessage", payload: { author: "user " + userId, text: $("secret-text").value } });
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
