// Join bursts in Chromium: N channels joined in one tick by a fresh connector (a page's first render): auth
// requests and subscribe requests counted at the dev stack, time until every subscribed() fired, against a raw
// EventSource opened on the same N topics. The subscribe URL each burst produced is measured against the 8 KiB
// request-line limit of common reverse proxies, and the hub cookie the auth response sets against the 4 KiB a
// browser keeps of one cookie.
import { request as httpRequest } from "node:http";
import { BenchPage } from "../lib/page.mjs";
import { topicOf, USER } from "../lib/stack.mjs";
import { median, sleep, waitFor, withTimeout } from "../lib/stats.mjs";

/** The request-line limit the subscribe URL is compared with (nginx's default large_client_header_buffers: 8k). */
export const REQUEST_LINE_LIMIT = 8 * 1024;

/** The most bytes (name, `=` and value) of one cookie that browsers keep (RFC 6265 §6.1's minimum; Chromium's limit). */
export const COOKIE_LIMIT = 4096;

/** `N` channel names as an app would have them: orders with five-digit ids. */
const orderNames = (count) => Array.from({ length: count }, (_, i) => `orders.${10_000 + i}`);

/** The full channel name of `name` joined as `kind`. */
const fullName = (kind, name) => (kind === "private" ? `private-${name}` : kind === "presence" ? `presence-${name}` : name);

/** The request line a subscribe request was sent with, from the hub's record of it. */
function requestLine(stack, record) {
    return `GET ${stack.server.hub.path}?${record.query} HTTP/1.1`;
}

/**
 * One burst in a fresh page: join `names` as `kind` in one tick; resolves with the time until every
 * subscribed() fired (null when that did not happen within `plan.windowMs`), the counts, the request line and
 * a raw EventSource's open time on the same topics (only when the burst subscribed: it needs the cookie).
 */
async function burst(browser, stack, kind, names, plan) {
    const page = await BenchPage.open(browser, stack.server.url, USER.id);
    try {
        stack.resetStats();
        const joined = page.run(([k, list]) => window.bench.joinBurst(k, list), [kind, names]);
        const elapsed = await withTimeout(joined, plan.windowMs, "subscribed()").catch(() => null);
        // Anything the burst still sets off (a second request, a reopen) shows within a moment.
        await sleep(plan.settleMs);
        const counts = stack.counts();
        const records = stack.server.hub.stats.subscribeConnections;
        const rawOpen =
            elapsed === null
                ? null
                : await page.run(([topics]) => window.bench.openRaw(topics, false), [names.map((name) => topicOf(fullName(kind, name)))]);
        await page.run(() => window.bench.closeRaws());
        const errors = await page.run(() => window.bench.takeErrors());
        if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
        return {
            elapsed,
            rawOpen,
            auth: counts.auth,
            subscribes: counts.subscribes,
            requestLine: records.length > 0 ? requestLine(stack, records[0]).length : null,
            statuses: records.map((record) => record.status),
            errors,
        };
    } finally {
        await page.close();
    }
}

/**
 * For each kind in `plan.kinds` and N in `plan.sizes`, `plan.reps` fresh pages each join N channels in one
 * tick; medians of the counts and times. A size whose first burst never subscribes is not repeated.
 */
export async function measureJoinBursts(browser, stack, plan) {
    const rows = [];
    for (const kind of plan.kinds) {
        for (const size of plan.sizes) {
            const names = orderNames(size);
            const runs = [];
            for (let rep = 0; rep < plan.reps; rep++) {
                runs.push(await burst(browser, stack, kind, names, plan));
                if (runs[0].elapsed === null) break;
            }
            const subscribed = runs.every((run) => run.elapsed !== null);
            rows.push({
                kind,
                size,
                subscribed,
                auth: median(runs.map((run) => run.auth)),
                subscribes: median(runs.map((run) => run.subscribes)),
                subscribedMs: subscribed ? median(runs.map((run) => run.elapsed)) : null,
                rawOpenMs: subscribed ? median(runs.map((run) => run.rawOpen)) : null,
                requestLine: runs[0].requestLine,
                statuses: runs.map((run) => run.statuses),
                errors: runs.flatMap((run) => run.errors),
                reps: runs.length,
            });
        }
    }
    return rows;
}

/**
 * The subscribe request line for N presence channels as laravel-mercure §3 and §4.1 build it: one `match` per
 * channel topic, then one `match_urlpattern` per channel.
 */
function presenceRequestLine(stack, names) {
    const params = new URLSearchParams();
    const topics = names.map((name) => topicOf(`presence-${name}`));
    for (const topic of topics) params.append("match", topic);
    for (const topic of topics) params.append("match_urlpattern", `${stack.server.hub.path}/subscriptions/:match_type/${encodeURIComponent(topic)}/:subscriber`);
    return `GET ${stack.server.hub.path}?${params} HTTP/1.1`;
}

/**
 * The subscribe request line of N presence channels (`presence-chat.<5 digits>`): each adds a `match` and a
 * `match_urlpattern`. Measured from what the connector sent (the hub's record), whatever the hub answered;
 * when the connector sent none within 5 s, computed as §4.1 builds it (the same computation is checked
 * against every measured row) and the auth statuses are kept.
 */
export async function measurePresenceUrls(browser, stack, sizes) {
    const rows = [];
    for (const size of sizes) {
        const page = await BenchPage.open(browser, stack.server.url, USER.id);
        try {
            stack.resetStats();
            const names = Array.from({ length: size }, (_, i) => `chat.${10_000 + i}`);
            const computed = presenceRequestLine(stack, names).length;
            // Not awaited: past the cookie and matcher limits no subscribed() comes.
            await page.run(([list]) => void window.bench.joinBurst("presence", list), [names]);
            const record = await waitFor("a subscribe request", () => stack.server.hub.stats.subscribeConnections[0], { timeout: 5_000 }).catch(() => null);
            const measured = record === null ? null : requestLine(stack, record).length;
            rows.push({
                size,
                requestLine: measured ?? computed,
                measured: measured !== null,
                computedMatches: measured === null ? null : measured === computed,
                status: record?.status ?? null,
                authStatuses: stack.server.app.stats.authRequests.map((request) => request.status),
                matchers: size * 2,
                errors: (await page.run(() => window.bench.takeErrors())).slice(0, 1),
            });
        } finally {
            await page.close();
        }
    }
    return rows;
}

/**
 * The most presence channels (`presence-chat.<5 digits>`) whose subscribe request line, as §4.1 builds it,
 * stays within `limit` bytes.
 */
export function presenceChannelsUnder(stack, limit) {
    let count = 0;
    while (count < 100 && presenceRequestLine(stack, Array.from({ length: count + 1 }, (_, i) => `chat.${10_000 + i}`)).length <= limit) count++;
    return count;
}

/**
 * The hub cookie (`mercure_access_token=<JWT>`) the dev app's auth response sets for N channels of `kind`,
 * in bytes as a browser counts it (name, `=`, value), for each N in `sizes`, and the largest N under
 * {@link COOKIE_LIMIT}. The dev app mints the token as Laravel's driver does (laravel-mercure §2.7: one
 * topic per private channel, plus its whisper topic while client events are on).
 */
export async function measureCookieSizes(stack, kind, sizes) {
    const login = await fetch(`${stack.server.url}/dev/login?user=${USER.id}`, { method: "POST" });
    const session = login.headers.getSetCookie().map((line) => line.split(";")[0]).join("; ");
    const cookieFor = async (count) => {
        const body = JSON.stringify({ channel_names: orderNames(count).map((name) => fullName(kind, name)) });
        const headers = { "Content-Type": "application/json", Accept: "application/json", Cookie: session };
        const setCookies = await postForSetCookies(stack.server.authEndpoint, headers, body);
        const line = setCookies.find((set) => set.startsWith("mercure_access_token="));
        return line === undefined ? null : line.split(";")[0].length;
    };
    const rows = [];
    for (const size of sizes) rows.push({ size, bytes: await cookieFor(size) });
    // The largest N that still fits: a binary search over 1..100 (sizes grow with N).
    let low = 0;
    let high = 100;
    while (low < high) {
        const middle = Math.ceil((low + high) / 2);
        if ((await cookieFor(middle)) <= COOKIE_LIMIT) low = middle;
        else high = middle - 1;
    }
    return { kind, rows, maxFitting: low };
}

/**
 * POST `body` and resolve with the response's Set-Cookie lines. node:http with a large header limit: the
 * cookie of many presence channels outgrows the 16 KiB of headers that fetch (undici) accepts.
 */
function postForSetCookies(url, headers, body) {
    return new Promise((resolve, reject) => {
        const request = httpRequest(url, { method: "POST", headers, maxHeaderSize: 1024 * 1024, timeout: 10_000 }, (response) => {
            response.resume();
            response.on("end", () => resolve(response.headers["set-cookie"] ?? []));
        });
        request.on("timeout", () => request.destroy(new Error("the auth request timed out")));
        request.on("error", reject);
        request.end(body);
    });
}
