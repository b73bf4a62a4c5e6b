// The memory schedule, shared by the Chromium run and the Node.js child process (scenarios/memory.mjs,
// scenarios/memory-node-child.mjs): the same cycles and messages, the heap read at the same checkpoints.

/**
 * Run the schedule against a `driver`: cycles in batches of `plan.batch` new channel names joined in one tick
 * (the first `plan.privatePerBatch` as private channels, the rest public: a hub cookie with many more private
 * grants than that outgrows what a browser keeps) and left in one tick, then messages in batches of
 * `plan.messageBatch`, each received before the next; resolves with the heap at each checkpoint (and after
 * `plan.cyclesLong` cycles, when given).
 *
 * The driver: `joinAll(privates, publics)` resolves when all are subscribed; `leaveAll(names)`;
 * `listenFeed()` resolves when the public channel `feed` is subscribed; `deliver(first, count)` publishes
 * numbers first..first+count-1 to `feed` and resolves when they were received; `heap()` resolves with the
 * heap in use after a full garbage collection.
 */
export async function runMemorySchedule(driver, plan) {
    const heap = {};
    let cycled = 0;
    const cycleTo = async (target) => {
        while (cycled < target) {
            const names = Array.from({ length: Math.min(plan.batch, target - cycled) }, (_, i) => `cycle.${cycled + i}`);
            await driver.joinAll(names.slice(0, plan.privatePerBatch), names.slice(plan.privatePerBatch));
            await driver.leaveAll(names);
            cycled += names.length;
        }
    };
    await cycleTo(plan.batch); // warm-up: the code paths compiled, the first cookie stored
    heap.afterWarmup = await driver.heap();
    await cycleTo(plan.cycles / 10);
    heap.cycles1 = await driver.heap();
    await cycleTo(plan.cycles);
    heap.cycles2 = await driver.heap();
    if (plan.cyclesLong !== undefined) {
        // A longer run shows whether growth between the first readings keeps going or levels off.
        await cycleTo(plan.cyclesLong);
        heap.cycles3 = await driver.heap();
    }

    await driver.listenFeed();
    let delivered = 0;
    const deliverTo = async (target) => {
        while (delivered < target) {
            const count = Math.min(plan.messageBatch, target - delivered);
            await driver.deliver(delivered + 1, count);
            delivered += count;
        }
    };
    await deliverTo(plan.messages / 10);
    heap.messages1 = await driver.heap();
    await deliverTo(plan.messages);
    heap.messages2 = await driver.heap();
    return heap;
}
