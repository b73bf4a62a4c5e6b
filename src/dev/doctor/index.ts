import { DOCTOR_USAGE, DoctorUsageError, parseDoctorArgs } from "./args";
import { runDoctor, type DoctorOptions } from "./doctor";
import { formatReport } from "./report";

/*
 * `laravel-echo-mercure doctor <app-url>`: checks a live deployment and prints one verdict per check. Node.js
 * only; it reuses the client's discovery and diagnostics, so it names the same causes the connector does.
 */

export { runDoctor, type DoctorOptions, type DoctorReport } from "./doctor";
export { formatReport } from "./report";
export { parseDoctorArgs, DOCTOR_USAGE } from "./args";
export type { CheckResult, Verdict } from "./checks";

/** Where the command writes, and what it may replace for tests. */
export interface DoctorIo {
    /** Standard output. */
    stdout: { write(text: string): unknown };
    /** Standard error. */
    stderr: { write(text: string): unknown };
    /** Replaces the doctor's fetch and clock. */
    overrides?: Pick<DoctorOptions, "fetch" | "now">;
}

/**
 * Run `doctor` with its arguments (after the word `doctor`); resolves with the exit status: 0 when no
 * check failed, 1 when one did, 2 for a usage error.
 */
export async function doctorCommand(argv: readonly string[], io: DoctorIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
    let parsed;
    try {
        parsed = parseDoctorArgs(argv);
    } catch (error) {
        if (!(error instanceof DoctorUsageError)) throw error;
        io.stderr.write(`laravel-echo-mercure doctor: ${error.message}\nRun "laravel-echo-mercure doctor --help" for usage.\n`);
        return 2;
    }
    if (parsed.help) {
        io.stdout.write(DOCTOR_USAGE);
        return 0;
    }
    const report = await runDoctor({ ...parsed.options, ...io.overrides });
    io.stdout.write(formatReport(report));
    return report.ok ? 0 : 1;
}
