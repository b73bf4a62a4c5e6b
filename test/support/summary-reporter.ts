import type { Reporter, SerializedError, TestModule } from "vitest/node";

/**
 * Prints one plain closing line, `N passed, N failed, N skipped`, after vitest's own summary, so that
 * tools reading the end of a CI log need not understand vitest's format. Before it, one `FAILED ` line per failure
 * names the file, the test and the first line of its error (test/support/run-all.mjs repeats them at the very end,
 * where a CI log's tail shows them).
 */
export default class SummaryReporter implements Reporter {
    onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
        const counts = { passed: 0, failed: 0, skipped: 0 };
        const failures: string[] = [];
        for (const module of testModules) {
            let failedInModule = 0;
            for (const test of module.children.allTests()) {
                const state = test.result().state;
                if (state === "passed") counts.passed++;
                else if (state === "failed") {
                    failedInModule++;
                    failures.push(`FAILED ${module.moduleId.replace(process.cwd() + "/", "")} > ${test.fullName}: ${firstLine(test.result().errors?.[0])}`);
                }
                else counts.skipped++;
            }
            // A file that failed outside its tests (a beforeAll hook, an import) counts as one failure.
            if (module.state() === "failed" && failedInModule === 0) {
                failures.push(`FAILED ${module.moduleId.replace(process.cwd() + "/", "")}: ${firstLine(module.errors()[0])}`);
            }
            counts.failed += module.state() === "failed" && failedInModule === 0 ? 1 : failedInModule;
        }
        counts.failed += unhandledErrors.length;
        for (const error of unhandledErrors) failures.push(`FAILED (an unhandled error): ${firstLine(error)}`);
        process.stdout.write(`\n${failures.map((line) => `${line}\n`).join("")}${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
    }
}

/** The first line of `error`'s message, cut to 300 characters. */
function firstLine(error: SerializedError | undefined): string {
    const message = error === undefined ? "(no error recorded)" : `${error.name ?? "Error"}: ${error.message ?? ""}`;
    return (message.split("\n")[0] ?? "").slice(0, 300);
}
