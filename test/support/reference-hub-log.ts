import { afterEach } from "vitest";
import { referenceHubLogs } from "./reference-hub";

// A failing test prints the log of every reference hub still running in its file: what the real hub refused and why.
afterEach((context) => {
    if (context.task.result?.state !== "fail") return;
    for (const hub of referenceHubLogs) {
        console.error(`--- log of the reference hub ${hub.version} at ${hub.url} (last 4 000 characters) ---\n${hub.log().slice(-4_000)}`);
    }
});
