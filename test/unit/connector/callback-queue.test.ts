import { describe, expect, it } from "vitest";
import { CallbackQueue } from "../../../src/connector/callback-queue";
import { RefreshScheduler } from "../../../src/connector/refresh-scheduler";

describe("CallbackQueue", () => {
    it("run(): flushes once the outermost state change is done, not from a nested one", () => {
        const queue = new CallbackQueue();
        const log: string[] = [];
        const result = queue.run(() => {
            queue.defer(() => log.push("outer callback"));
            queue.run(() => queue.defer(() => log.push("nested callback")));
            log.push("outer change done");
            return 7;
        });
        expect(result).toBe(7);
        expect(log).toEqual(["outer change done", "outer callback", "nested callback"]);
        queue.run(() => queue.defer(() => log.push("next")));
        expect(log.at(-1)).toBe("next");
    });

    it("run(): flushes even when the change throws", () => {
        const queue = new CallbackQueue();
        const log: string[] = [];
        expect(() =>
            queue.run(() => {
                queue.defer(() => log.push("callback"));
                throw new Error("boom");
            }),
        ).toThrow("boom");
        expect(log).toEqual(["callback"]);
    });

    it("runs nothing until flushed, then everything in order, including what callbacks queue meanwhile", () => {
        const queue = new CallbackQueue();
        const ran: string[] = [];
        queue.defer(() => {
            ran.push("a");
            queue.defer(() => ran.push("c"));
            queue.flush(); // nested: the running flush carries on
            ran.push("a done");
        });
        queue.defer(() => ran.push("b"));
        expect(ran).toEqual([]);
        queue.flush();
        expect(ran).toEqual(["a", "a done", "b", "c"]);
        queue.flush();
        expect(ran).toHaveLength(4);
    });
});

describe("RefreshScheduler", () => {
    it("coalesces requests of one tick, and runs one trailing run for requests during a run", async () => {
        const runs: number[] = [];
        let release: () => void = () => undefined;
        const scheduler = new RefreshScheduler(
            () => {
                runs.push(runs.length);
                return runs.length === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
            },
            () => undefined,
        );
        scheduler.request();
        scheduler.request();
        await Promise.resolve();
        expect(runs).toEqual([0]);
        scheduler.request();
        scheduler.request();
        release();
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(runs).toEqual([0, 1]);
    });

    it("serves the requests made before a run's captured() with that run: only later ones get a trailing run", async () => {
        const runs: number[] = [];
        const gates: Array<() => void> = [];
        const gate = () => new Promise<void>((resolve) => gates.push(resolve));
        const scheduler = new RefreshScheduler(async () => {
            runs.push(runs.length);
            if (runs.length > 1) return;
            await gate(); // e.g. locating the hub
            scheduler.captured();
            await gate(); // e.g. the auth request
        }, () => undefined);
        scheduler.request();
        await Promise.resolve();
        scheduler.request(); // before captured(): served by the running refresh
        gates.shift()!();
        await new Promise((resolve) => setTimeout(resolve, 0));
        gates.shift()!();
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(runs).toEqual([0]);
        scheduler.request(); // a new request after the run ended: a new run
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(runs).toEqual([0, 1]);
    });

    it("runs a trailing run for a request made after captured()", async () => {
        const runs: number[] = [];
        let release: () => void = () => undefined;
        const scheduler = new RefreshScheduler(async () => {
            runs.push(runs.length);
            if (runs.length > 1) return;
            scheduler.captured();
            await new Promise<void>((resolve) => (release = resolve));
        }, () => undefined);
        scheduler.request();
        await Promise.resolve();
        scheduler.request(); // after captured(): needs its own run
        release();
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(runs).toEqual([0, 1]);
    });

    it("hands a throwing run to its failure handler, and drops queued work on reset()", async () => {
        const failures: unknown[] = [];
        let runs = 0;
        const scheduler = new RefreshScheduler(
            async () => {
                runs++;
                throw new Error("boom");
            },
            (error) => failures.push(error),
        );
        scheduler.request();
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(failures.map(String)).toEqual(["Error: boom"]);
        scheduler.request();
        scheduler.reset();
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(runs).toBe(1);
    });
    it("running(): null when idle; while a run and its trailing run go on, a promise that resolves once both ended, and at reset()", async () => {
        const ended: string[] = [];
        let release: () => void = () => undefined;
        let runs = 0;
        const scheduler = new RefreshScheduler(
            () => (++runs === 1 ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve()),
            () => undefined,
        );
        expect(scheduler.running()).toBeNull();
        scheduler.request();
        void scheduler.running()!.then(() => ended.push(`after ${runs} runs`));
        await new Promise((resolve) => setTimeout(resolve, 0));
        scheduler.request(); // During the run: one trailing run.
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(ended).toEqual([]);
        release();
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(ended).toEqual(["after 2 runs"]);
        expect(scheduler.running()).toBeNull();

        scheduler.request();
        void scheduler.running()!.then(() => ended.push("reset"));
        scheduler.reset();
        await new Promise((resolve) => setTimeout(resolve, 0));
        expect(ended).toEqual(["after 2 runs", "reset"]);
    });
});
