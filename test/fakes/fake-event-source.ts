import type { EventSourceConstructor, EventSourceLike } from "../../src/transport/platform";

/** A scriptable EventSource: tests drive it with emitOpen / emitMessage / emitError. */
export interface FakeEventSource extends EventSourceLike {
    readonly url: string;
    readonly withCredentials: boolean;
    readonly closed: boolean;
    /** The `match` parameters of the URL, in order. */
    matches(): string[];
    /** A query parameter of the URL. */
    param(name: string): string | null;
    emitOpen(): void;
    emitMessage(data: unknown, id?: string): void;
    /** Deliver an `event: mercure` subscription event to the `addEventListener("mercure")` listeners, even once closed. */
    emitSubscription(data: unknown, id?: string): void;
    /** The `match_urlpattern` parameters of the URL, in order. */
    patterns(): string[];
    /**
     * Report an error; `closed` makes it terminal (readyState CLOSED), otherwise CONNECTING; `status` is put on the
     * event as `event-source-polyfill` does. The `addEventListener("error")` listeners hear it first, then `onerror`.
     */
    emitError(closed?: boolean, status?: number): void;
}

/** A fake EventSource class with its own list of instances. */
export interface FakeEventSourceClass extends EventSourceConstructor {
    readonly instances: FakeEventSource[];
    /** Instances not closed yet. */
    live(): FakeEventSource[];
    /** The most recent instance. */
    last(): FakeEventSource;
}

/** Create an isolated fake EventSource class. */
export function createFakeEventSource(): FakeEventSourceClass {
    const instances: FakeEventSource[] = [];
    class Fake implements FakeEventSource {
        static readonly CLOSED = 2;
        static readonly instances = instances;
        static live(): FakeEventSource[] {
            return instances.filter((instance) => !instance.closed);
        }
        static last(): FakeEventSource {
            const last = instances[instances.length - 1];
            if (last === undefined) throw new Error("no EventSource was opened");
            return last;
        }

        readyState = 0;
        closed = false;
        onopen: ((event: Event) => unknown) | null = null;
        onmessage: ((event: MessageEvent) => unknown) | null = null;
        onerror: ((event: Event) => unknown) | null = null;
        readonly withCredentials: boolean;
        private readonly listeners = new Map<string, Array<(event: MessageEvent) => unknown>>();

        constructor(
            readonly url: string,
            init?: { withCredentials?: boolean },
        ) {
            this.withCredentials = init?.withCredentials === true;
            instances.push(this);
        }

        matches(): string[] {
            return new URL(this.url).searchParams.getAll("match");
        }

        patterns(): string[] {
            return new URL(this.url).searchParams.getAll("match_urlpattern");
        }

        addEventListener(type: string, listener: (event: MessageEvent) => unknown): void {
            this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
        }

        param(name: string): string | null {
            return new URL(this.url).searchParams.get(name);
        }

        close(): void {
            this.closed = true;
            this.readyState = 2;
        }

        emitOpen(): void {
            if (this.closed) throw new Error("cannot open a closed EventSource");
            this.readyState = 1;
            this.onopen?.(new Event("open"));
        }

        emitMessage(data: unknown, id = ""): void {
            this.onmessage?.(message("message", data, id));
        }

        emitSubscription(data: unknown, id = ""): void {
            for (const listener of this.listeners.get("mercure") ?? []) listener(message("mercure", data, id));
        }

        emitError(closed = false, status?: number): void {
            this.readyState = closed ? 2 : 0;
            if (closed) this.closed = true;
            const event = Object.assign(new Event("error"), status === undefined ? {} : { status });
            for (const listener of this.listeners.get("error") ?? []) listener(event as MessageEvent);
            this.onerror?.(event);
        }
    }
    return Fake as unknown as FakeEventSourceClass;
}

function message(type: string, data: unknown, id: string): MessageEvent {
    return new MessageEvent(type, { data: typeof data === "string" ? data : JSON.stringify(data), lastEventId: id });
}
