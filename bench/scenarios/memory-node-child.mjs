// The Node.js side of the memory figures, in its own process (forked by scenarios/memory.mjs with
// --expose-gc) so that its heap holds the connector and the eventsource package, not the dev stack: MercureEcho
// with a cookie-keeping fetch, driven by the shared schedule. Messages are published by the parent on request.
import { EventSource } from "eventsource";
import { cookieJarFetch } from "../../dist/dev/index.js";
import { MercureEcho } from "../../dist/index.js";
import { runMemorySchedule } from "../lib/memory-schedule.mjs";
import { sleep, waitFor, withTimeout } from "../lib/stats.mjs";

/** Ask the parent to publish numbers to `feed`; resolves when it has. */
function requestPublish(first, count) {
    return new Promise((resolve) => {
        const onMessage = (message) => {
            if (message?.type !== "published") return;
            process.off("message", onMessage);
            resolve();
        };
        process.on("message", onMessage);
        process.send({ type: "publish", first, count });
    });
}

async function main({ origin, hubUrl, userId, plan }) {
    const fetch = cookieJarFetch();
    const login = await fetch(`${origin}/dev/login?user=${userId}`, { method: "POST" });
    if (login.status !== 200) throw new Error(`Logging in dev user ${userId} answered ${login.status}.`);
    const echo = new MercureEcho({ host: hubUrl, eventSource: EventSource, fetch });
    let received = 0;
    const subscribed = (channel) => new Promise((resolve) => channel.subscribed(resolve));
    try {
        return await runMemorySchedule(
            {
                joinAll: (privates, publics) => {
                    const all = [...privates.map((name) => subscribed(echo.private(name))), ...publics.map((name) => subscribed(echo.channel(name)))];
                    return withTimeout(Promise.all(all), 30_000, `${all.length} channels subscribed in Node.js`);
                },
                leaveAll: async (names) => {
                    for (const name of names) echo.leave(name);
                },
                listenFeed: () => subscribed(echo.channel("feed").listen(".tick", () => received++)),
                deliver: async (first, count) => {
                    const target = received + count;
                    await requestPublish(first, count);
                    await waitFor("the messages in Node.js", () => received >= target, { timeout: 60_000, interval: 10 });
                },
                heap: async () => {
                    await sleep(50);
                    globalThis.gc();
                    globalThis.gc();
                    return process.memoryUsage().heapUsed;
                },
            },
            plan,
        );
    } finally {
        echo.disconnect();
    }
}

process.once("message", (message) => {
    main(message).then(
        (heap) => process.send({ type: "result", heap }, () => process.exit(0)),
        (error) => process.send({ type: "error", message: String(error?.stack ?? error) }, () => process.exit(1)),
    );
});
