/** Where the built bundle is served by the dev server. */
export const BUNDLE_PATH = "/dist/laravel-echo-mercure.iife.js";

/** The harness page's path on the dev server. */
export const HARNESS_PAGE = "/harness.html";

/** The harness page with an axios-shaped HTTP client, for Echo's request interceptors. */
export const INTERCEPTOR_PAGE = "/interceptors.html";

/** The stock-Echo page's path on the dev server. */
export const STOCK_ECHO_PAGE = "/stock-echo.html";

/** The public channel and events the stock-Echo page listens to. */
export const STOCK_ECHO_CHANNEL = "stock";

/**
 * The in-page harness, plain JavaScript so it runs as written (no transpiler between it and Chromium).
 *
 * It creates one `MercureEcho` from the bundle's `window.EchoMercure`, and records every event, error,
 * `subscribed()` call and connection status into arrays that the test reads through `page.evaluate`.
 */
const HARNESS_SCRIPT = String.raw`
(function () {
    "use strict";
    var harness = {
        echo: null,
        events: [],
        errors: [],
        subscribed: [],
        statuses: [],
        presence: [],

        /** Create the Echo instance; returns its socket id. */
        create: function (options) {
            if (this.echo !== null) throw new Error("harness.create() was already called on this page.");
            var merged = Object.assign({ host: "/.well-known/mercure" }, options || {});
            var echo = new window.EchoMercure.MercureEcho(merged);
            var statuses = this.statuses;
            statuses.push(echo.connectionStatus());
            echo.connector.onConnectionChange(function (status) { statuses.push(status); });
            this.echo = echo;
            return echo.socketId();
        },

        /** Join every spec synchronously (one tick), registering recorders on each channel. */
        join: function (specs) {
            var self = this;
            specs.forEach(function (spec) {
                var channel = spec.kind === "private" ? self.echo.private(spec.name)
                    : spec.kind === "encrypted" ? self.echo.encryptedPrivate(spec.name)
                    : spec.kind === "presence" ? self.echo.join(spec.name)
                    : self.echo.channel(spec.name);
                var full = channel.name;
                if (spec.kind === "presence") {
                    var record = function (kind) {
                        return function (value) {
                            var names = (Array.isArray(value) ? value : [value]).map(function (member) { return member.name; });
                            self.presence.push({ channel: full, line: kind + " " + names.join(",") });
                        };
                    };
                    channel.here(record("here")).joining(record("joining")).leaving(record("leaving"));
                }
                (spec.events || []).forEach(function (event) {
                    channel.listen(event, function (payload) {
                        self.events.push({ channel: full, listener: event, payload: payload });
                    });
                });
                if (spec.notifications) {
                    channel.notification(function (payload) {
                        self.events.push({ channel: full, listener: "notification", payload: payload });
                    });
                }
                channel.subscribed(function () { self.subscribed.push(full); });
                channel.error(function (error) {
                    self.errors.push({
                        channel: error && error.channel !== undefined ? error.channel : full,
                        code: error && error.code !== undefined ? String(error.code) : "unknown",
                        message: error && error.message !== undefined ? String(error.message) : String(error),
                    });
                });
            });
        },

        /** Echo's leave(): the channel and its private/presence variants. */
        leave: function (name) { this.echo.leave(name); },

        /** Echo's leaveChannel(): one full channel name. */
        leaveChannel: function (name) { this.echo.leaveChannel(name); },

        /** A copy of everything recorded so far, plus the live status. */
        snapshot: function () {
            return JSON.parse(JSON.stringify({
                events: this.events,
                errors: this.errors,
                subscribed: this.subscribed,
                statuses: this.statuses,
                presence: this.presence,
                status: this.echo === null ? null : this.echo.connectionStatus(),
            }));
        },

        /** The member names of a joined presence channel now (null before its first here()). */
        members: function (name) {
            var names = null;
            // Sorted: who is in the room is the fact; the order depends on which snapshot or event came first.
            this.echo.join(name).here(function (members) { names = members.map(function (member) { return member.name; }).sort(); });
            return names;
        },

        /** Log in as a dev user (sets the httpOnly dev_user cookie); resolves with the HTTP status. */
        login: function (id) {
            return fetch("/dev/login?user=" + encodeURIComponent(id), { method: "POST", credentials: "same-origin" })
                .then(function (response) { return response.status; });
        },
    };
    window.harness = harness;
})();
`;

/** The harness page: the bundle plus {@link HARNESS_SCRIPT}; nothing is created until the test asks. */
export function harnessPage(): string {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>laravel-echo-mercure browser harness</title>
<script src="${BUNDLE_PATH}"></script>
<script>${HARNESS_SCRIPT}</script>
</head>
<body><p>laravel-echo-mercure browser harness</p></body>
</html>
`;
}

/**
 * The smallest `window.axios` Echo's interceptor hook recognises (a function with
 * `interceptors.request.use`) and an `axios.post` that runs the registered request interceptors, then sends
 * the request with fetch. A stand-in: the package has no axios devDependency, and this is the surface of axios
 * that Echo 2.5 touches (`registerAxiosRequestInterceptor` sets `config.headers["X-Socket-Id"]`).
 */
const AXIOS_STAND_IN = String.raw`
(function () {
    "use strict";
    var interceptors = [];
    function axios(config) { return axios.request(config); }
    axios.interceptors = { request: { use: function (fulfilled) { interceptors.push(fulfilled); return interceptors.length - 1; } } };
    axios.request = function (config) {
        var start = Promise.resolve(Object.assign({ method: "get", headers: {} }, config));
        return interceptors.reduce(function (chain, fulfilled) { return chain.then(fulfilled); }, start).then(function (final) {
            return fetch(final.url, {
                method: final.method.toUpperCase(),
                headers: Object.assign({ "Content-Type": "application/json" }, final.headers),
                body: final.data === undefined ? undefined : JSON.stringify(final.data),
                credentials: "same-origin",
            }).then(function (response) { return { status: response.status }; });
        });
    };
    axios.post = function (url, data) { return axios.request({ url: url, method: "post", data: data }); };
    window.axios = axios;
})();
`;

/** The harness page with {@link AXIOS_STAND_IN} loaded before Echo is created, as an app's bootstrap.js does. */
export function interceptorPage(): string {
    return harnessPage().replace("<script>", () => `<script>${AXIOS_STAND_IN}</script>\n<script>`);
}

/**
 * A page written the way an app without a bundler would: a plain `<script>` using stock Echo with the
 * connector class as broadcaster. It records into `window.received`.
 */
export function stockEchoPage(): string {
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>stock Echo with the Mercure connector</title>
<script src="${BUNDLE_PATH}"></script>
<script>
window.received = [];
window.echo = new EchoMercure.Echo({
    broadcaster: EchoMercure.MercureConnector,
    host: "/.well-known/mercure",
});
window.echo.channel("${STOCK_ECHO_CHANNEL}")
    .listen(".stock.ping", function (payload) { window.received.push({ listener: ".stock.ping", payload: payload }); })
    .listen("StockChanged", function (payload) { window.received.push({ listener: "StockChanged", payload: payload }); });
</script>
</head>
<body><p>stock Echo</p></body>
</html>
`;
}
