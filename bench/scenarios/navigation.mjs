// Issue 13's figure: Laravel auth requests per 100 page navigations of a typical single-page app, with tab
// sharing off (every change of the channel set authorizes: the "before" figure) and on (the default: leaves and
// public joins are answered from the shared grant), and the reopen latency of each navigation. The app keeps the user's notification channel joined; each navigation leaves
// the previous route's channel and joins the next route's in one tick (a router's unmount and mount), and
// the user stays on each page until its channel is subscribed and a moment more.
import { BenchPage } from "../lib/page.mjs";
import { USER } from "../lib/stack.mjs";
import { sleep, withTimeout } from "../lib/stats.mjs";

/**
 * The route visited at navigation `i`: a dashboard with no channel of its own, an order page (a new order
 * every time: private `orders.<id>`), one of three chat rooms (presence `chat.<0..2>`), the news feed
 * (public `news`).
 */
export function routeAt(i) {
    switch (i % 4) {
        case 0:
            return { path: "/dashboard", channels: [] };
        case 1:
            return { path: `/orders/${30_000 + i}`, channels: [{ kind: "private", name: `orders.${30_000 + i}` }] };
        case 2:
            return { path: `/chat/${i % 3}`, channels: [{ kind: "presence", name: `chat.${i % 3}` }] };
        default:
            return { path: "/news", channels: [{ kind: "public", name: "news" }] };
    }
}

/**
 * 100 navigations (`plan.navigations`), `plan.dwellMs` on each page after its channels are subscribed, with the
 * connector `options` (e.g. `{ shareAcrossTabs: false }`). `latencies`: for each navigation that joins a channel,
 * the ms from the navigation until its channel's `subscribed()` fired.
 */
export async function measureNavigations(browser, stack, plan, options = {}) {
    const page = await BenchPage.open(browser, stack.server.url, USER.id, options);
    try {
        await withTimeout(page.run(([id]) => window.bench.joinBurst("private", [`App.Models.User.${id}`]), [USER.id]), 30_000, "the notification channel");
        await sleep(plan.dwellMs);
        stack.resetStats();
        let previous = [];
        const latencies = [];
        for (let i = 0; i < plan.navigations; i++) {
            const route = routeAt(i);
            const ms = await withTimeout(
                page.run(([leave, join]) => window.bench.navigate(leave, join), [previous.map((channel) => channel.name), route.channels]),
                30_000,
                `navigation ${i} to ${route.path}`,
            );
            if (route.channels.length > 0) latencies.push(ms);
            previous = route.channels;
            await sleep(plan.dwellMs);
        }
        const counts = stack.counts();
        if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
        const channelErrors = (await page.run(() => window.bench.takeErrors())).length;
        return { navigations: plan.navigations, auth: counts.auth, subscribes: counts.subscribes, per100: (counts.auth * 100) / plan.navigations, channelErrors, latencies };
    } finally {
        await page.close();
    }
}
