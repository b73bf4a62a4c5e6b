// Memory: the heap after garbage collection, before and after 10 000 join/leave cycles (every channel name new,
// so a per-name cache that is never emptied would show) and after 100 000 delivered messages (the delivery
// ledger and the cursor are bounded). In Chromium through the DevTools protocol; in Node.js in a child process
// run with --expose-gc (lib/memory-schedule.mjs runs the same schedule in both).
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { runMemorySchedule } from "../lib/memory-schedule.mjs";
import { BenchPage } from "../lib/page.mjs";
import { USER } from "../lib/stack.mjs";
import { withTimeout } from "../lib/stats.mjs";

/** Publish numbers first..first+count-1 to the public channel `feed`. */
function publishNumbers(stack, first, count) {
    for (let n = first; n < first + count; n++) stack.publish("feed", "tick", { n });
}

/** The Chromium figures: one page, its JavaScript heap after a full GC at each checkpoint. */
export async function measureBrowserMemory(browser, stack, plan) {
    const page = await BenchPage.open(browser, stack.server.url, USER.id);
    try {
        const heap = await runMemorySchedule(
            {
                joinAll: (privates, publics) =>
                    withTimeout(
                        page.run(([a, b]) => Promise.all([window.bench.joinBurst("private", a), window.bench.joinBurst("public", b)]), [privates, publics]),
                        30_000,
                        `${privates.length + publics.length} channels subscribed`,
                    ),
                leaveAll: (names) => page.run(([list]) => window.bench.leaveAll(list), [names]),
                listenFeed: () => page.run(() => window.bench.listen("public", "feed", ".tick")),
                deliver: async (first, count) => {
                    await page.run(([target]) => window.bench.arm(target, false, false), [count]);
                    publishNumbers(stack, first, count);
                    await page.waitDone(["connector"]);
                },
                heap: () => page.heapAfterGc(),
            },
            plan,
        );
        if (page.errors.length > 0) throw new Error(`bench page errors: ${page.errors.join("; ")}`);
        return { ...heap, channelErrors: (await page.run(() => window.bench.takeErrors())).length };
    } finally {
        await page.close();
    }
}

/**
 * V8 flags of the Node.js child: without them, V8 keeps adding compiled code (optimized and baseline code, its
 * deoptimization data, feedback vectors, inline-cache handlers) as more functions of the connector, undici and Node
 * get hot, tens of thousands of cycles on, which a heap reading cannot tell from retained objects. The objects a
 * program keeps do not depend on the tier that runs it.
 */
export const NODE_MEMORY_FLAGS = ["--no-opt", "--no-sparkplug", "--no-lazy-feedback-allocation"];

/** The Node.js figures, from a child process (`memory-node-child.mjs`) whose heap holds only the client. */
export async function measureNodeMemory(stack, plan) {
    const child = fork(fileURLToPath(new URL("./memory-node-child.mjs", import.meta.url)), [], { execArgv: ["--expose-gc", ...NODE_MEMORY_FLAGS], stdio: "inherit" });
    try {
        const result = new Promise((resolve, reject) => {
            child.on("message", (message) => {
                if (message.type === "publish") {
                    publishNumbers(stack, message.first, message.count);
                    child.send({ type: "published" });
                } else if (message.type === "result") resolve(message.heap);
                else if (message.type === "error") reject(new Error(`Node.js memory run: ${message.message}`));
            });
            child.on("exit", (code) => reject(new Error(`the Node.js memory run exited with ${code} before reporting`)));
        });
        child.send({ origin: stack.server.url, hubUrl: stack.server.hubUrl, userId: USER.id, plan });
        return { ...(await withTimeout(result, 180_000, "the Node.js memory run")), flags: NODE_MEMORY_FLAGS };
    } finally {
        child.kill();
    }
}
