import type { Verdict } from "./checks";
import type { DoctorReport } from "./doctor";

/** How each verdict is printed: failures stand out, the rest are lower-case. */
const LABELS: Readonly<Record<Verdict, string>> = { pass: "pass", fail: "FAIL", warn: "warn", skip: "skip" };

/** The width of the check-name column. */
const NAME_WIDTH = 26;

/**
 * Format a report for a terminal: a heading, one line per check (verdict, name, what was seen), the fix
 * indented under each failure and warning that has one, and a summary line.
 */
export function formatReport(report: DoctorReport): string {
    const lines = [`laravel-echo-mercure doctor: ${report.appUrl} (pages on ${report.origin})`];
    for (const check of report.checks) {
        lines.push(`  ${LABELS[check.verdict].padEnd(4)}  ${check.name.padEnd(NAME_WIDTH)}  ${check.detail}`);
        if (check.fix !== undefined && check.verdict !== "pass") lines.push(`        fix: ${check.fix}`);
    }
    const failed = report.checks.filter((check) => check.verdict === "fail").length;
    lines.push(failed === 0 ? `No check failed (${report.checks.length} checks).` : `${failed} of ${report.checks.length} checks failed.`);
    return lines.join("\n") + "\n";
}
