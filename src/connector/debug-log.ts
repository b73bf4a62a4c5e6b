/**
 * A logger for the `debug` option: called with the protocol step's name and, for most steps, an object of
 * facts (channel names, the stream URL, event ids). Never given a cookie, a header or a token.
 */
export type DebugLogger = (step: string, detail?: object) => void;

/**
 * The logger the `debug` option asks for: `true` logs with `console.debug` (prefixed), a function is used
 * as it is, anything else logs nothing (null, so that call sites written `log?.(step, { … })` build no
 * detail object when debugging is off).
 */
export function resolveDebug(option: unknown): DebugLogger | null {
    if (typeof option === "function") return option as DebugLogger;
    if (option !== true) return null;
    return (step, detail) => console.debug("[laravel-echo-mercure] " + step, ...(detail === undefined ? [] : [detail]));
}
