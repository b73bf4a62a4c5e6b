// The part of event-source-polyfill's API the tests and the README examples use, for the type checks (the package
// ships no types; apps install @types/event-source-polyfill, whose declarations these follow).
declare module "event-source-polyfill" {
    /** The init dict: the native fields plus the polyfill's own. */
    export interface EventSourcePolyfillInit {
        /** Send cookies. */
        withCredentials?: boolean;
        /** Request headers (for example `Authorization`). */
        headers?: Record<string, string>;
        /** Reconnect after this many milliseconds without data. Default 45000. */
        heartbeatTimeout?: number;
        /** The query parameter carrying the last event id on reconnects. Default `lastEventId`. */
        lastEventIdQueryParameterName?: string;
    }

    /** An EventSource over XHR or fetch that can send headers. */
    export class EventSourcePolyfill extends EventTarget {
        /** Open `url`. */
        constructor(url: string, init?: EventSourcePolyfillInit);
        /** The `CLOSED` readyState. */
        static readonly CLOSED: number;
        /** 0 connecting, 1 open, 2 closed. */
        readonly readyState: number;
        /** Whether cookies are sent. */
        readonly withCredentials: boolean;
        /** Called when the stream opens. */
        onopen: ((event: Event) => unknown) | null;
        /** Called for unnamed events. */
        onmessage: ((event: MessageEvent) => unknown) | null;
        /** Called on errors; the event carries `status` for a refused connection. */
        onerror: ((event: Event) => unknown) | null;
        /** Listen for named events. */
        addEventListener(type: string, listener: (event: MessageEvent) => unknown): void;
        /** Close for good. */
        close(): void;
    }
}
