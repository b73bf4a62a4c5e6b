import type { Reporter, SerializedError, TestModule } from "vitest/node";

/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, after vitest's own summary, so that
 * tools reading the end of a CI log need not understand vitest's format.
 */
export default class SummaryReporter implements Reporter {
    onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
        const counts = { passed: 0, failed: 0, skipped: 0 };
        for (const module of testModules) {
            let failedInModule = 0;
            for (const test of module.children.allTests()) {
                const state = test.result().state;
                if (state === "passed") counts.passed++;
                else if (state === "failed") failedInModule++;
                else counts.skipped++;
            }
            // A file that failed outside its tests (a beforeAll hook, an import) counts as one failure.
            counts.failed += module.state() === "failed" && failedInModule === 0 ? 1 : failedInModule;
        }
        counts.failed += unhandledErrors.length;
        process.stdout.write(`\n${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
    }
}
