/** One dispatched server-sent event, as EventSource would report it. */
export interface SseEvent {
    /** Event type (`message` when no `event:` field was sent). */
    type: string;
    /** Data lines joined with LF. */
    data: string;
    /** Last event id after this event. */
    lastEventId: string;
    /** Whether the event itself carried an `id:` field. */
    hadId: boolean;
    /** `retry:` value carried by this event, if any. */
    retry: number | undefined;
}

/** A fetch-based event-stream reader for tests. */
export interface SseStream {
    /** HTTP status of the response. */
    status: number;
    /** Response headers. */
    headers: Headers;
    /** Body text when the response was not an event stream (errors). */
    body: string;
    /** Every event received so far. */
    events: SseEvent[];
    /** Number of comment lines received. */
    comments: number;
    /** Raw text received so far. */
    raw: string;
    /** Resolves when the body ends: `"end"` for a clean end, `"error"` for a network failure, `"aborted"` after close(). */
    finished: Promise<"end" | "error" | "aborted">;
    /** Wait for the next `count` not-yet-consumed events. */
    next(count?: number, timeoutMs?: number): Promise<SseEvent[]>;
    /** Wait `ms` and fail if any not-yet-consumed event arrived. */
    expectNone(ms?: number): Promise<void>;
    /** Wait until `predicate` holds on the stream (polling), or fail after `timeoutMs`. */
    waitFor(predicate: (stream: SseStream) => boolean, timeoutMs?: number): Promise<void>;
    /** Abort the request. */
    close(): void;
}

/** Open an event stream with fetch; resolves once response headers arrive. */
export async function openSse(url: string, init: { headers?: Record<string, string>; method?: string } = {}): Promise<SseStream> {
    const controller = new AbortController();
    const response = await fetch(url, {
        method: init.method ?? "GET",
        headers: { accept: "text/event-stream", ...init.headers },
        signal: controller.signal,
    });
    let consumed = 0;
    const listeners = new Set<() => void>();
    const notify = (): void => listeners.forEach((listener) => listener());
    const stream: SseStream = {
        status: response.status,
        headers: response.headers,
        body: "",
        events: [],
        comments: 0,
        raw: "",
        finished: Promise.resolve("end"),
        next(count = 1, timeoutMs = 1000) {
            return new Promise((resolve, reject) => {
                const check = (): boolean => {
                    if (stream.events.length - consumed < count) return false;
                    const batch = stream.events.slice(consumed, consumed + count);
                    consumed += count;
                    resolve(batch);
                    return true;
                };
                if (check()) return;
                const timer = setTimeout(() => {
                    listeners.delete(listener);
                    reject(new Error(`Expected ${count} event(s) within ${timeoutMs} ms, got ${stream.events.length - consumed}: ${JSON.stringify(stream.events.slice(consumed))}`));
                }, timeoutMs);
                const listener = (): void => {
                    if (check()) {
                        clearTimeout(timer);
                        listeners.delete(listener);
                    }
                };
                listeners.add(listener);
            });
        },
        async expectNone(ms = 150) {
            await new Promise((resolve) => setTimeout(resolve, ms));
            if (stream.events.length > consumed) {
                throw new Error(`Expected no event, got ${JSON.stringify(stream.events.slice(consumed))}`);
            }
        },
        async waitFor(predicate, timeoutMs = 1000) {
            const deadline = Date.now() + timeoutMs;
            while (!predicate(stream)) {
                if (Date.now() > deadline) throw new Error("Condition not met in time.");
                await new Promise((resolve) => setTimeout(resolve, 10));
            }
        },
        close() {
            controller.abort();
        },
    };
    if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream") || response.body === null) {
        stream.body = await response.text();
        return stream;
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = createParser(stream, notify);
    stream.finished = (async () => {
        try {
            for (;;) {
                const { done, value } = await reader.read();
                if (done) return "end";
                const text = decoder.decode(value, { stream: true });
                stream.raw += text;
                parser(text);
            }
        } catch {
            return controller.signal.aborted ? "aborted" : "error";
        }
    })();
    return stream;
}

/** An SSE parser following the WHATWG event-stream interpretation rules. */
function createParser(stream: SseStream, notify: () => void): (chunk: string) => void {
    let buffer = "";
    let data = "";
    let type = "";
    let lastEventId = "";
    let hadId = false;
    let retry: number | undefined;
    const line = (text: string): void => {
        if (text === "") {
            if (data === "") {
                type = "";
                hadId = false;
                retry = undefined;
                return;
            }
            stream.events.push({ type: type || "message", data: data.slice(0, -1), lastEventId, hadId, retry });
            data = "";
            type = "";
            hadId = false;
            retry = undefined;
            notify();
            return;
        }
        if (text.startsWith(":")) {
            stream.comments++;
            notify();
            return;
        }
        const colon = text.indexOf(":");
        const field = colon === -1 ? text : text.slice(0, colon);
        let value = colon === -1 ? "" : text.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") data += value + "\n";
        else if (field === "event") type = value;
        else if (field === "id" && !value.includes("\0")) {
            lastEventId = value;
            hadId = true;
        } else if (field === "retry" && /^[0-9]+$/.test(value)) retry = Number(value);
    };
    return (chunk) => {
        buffer += chunk;
        for (;;) {
            const match = /\r\n|\r|\n/.exec(buffer);
            if (match === null) return;
            // A trailing CR may be the first half of a CRLF split across chunks.
            if (match[0] === "\r" && match.index === buffer.length - 1) return;
            line(buffer.slice(0, match.index));
            buffer = buffer.slice(match.index + match[0].length);
        }
    };
}
