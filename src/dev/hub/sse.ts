import type { Update } from "./update";

/** Headers of an event-stream response (the Go hub's set). */
export const STREAM_HEADERS: Readonly<Record<string, string>> = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "private, no-cache, no-store, must-revalidate, max-age=0",
    Pragma: "no-cache",
    "X-Accel-Buffering": "no",
    Connection: "keep-alive",
};

/** A keep-alive comment; also written first so headers flush and `EventSource.onopen` fires. */
export const KEEP_ALIVE = ":\n";

/**
 * Serialize an update as one SSE event: `event:` only when a type was published, `retry:` when published,
 * always `id:`, and one `data:` line per line of data.
 */
export function serializeEvent(update: Update): string {
    let out = "";
    // [spec] §1.3: `event:` carries the published type; omitted otherwise.
    if (update.type !== undefined) out += `event: ${update.type}\n`;
    if (update.retry !== undefined) out += `retry: ${update.retry}\n`;
    // [spec] §1.3: every event carries an id.
    out += `id: ${update.id}\n`;
    // [spec] §1.3: split on CR, LF or CRLF; empty data still yields one `data:` line.
    for (const line of update.data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
    return out + "\n";
}
