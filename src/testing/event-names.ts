/**
 * The wire name of an event as a test names it, by Echo's own rules (laravel-mercure §4.6), so that a test writes
 * what the component listens for: `"OrderShipped"` is `App\Events\OrderShipped` under the default namespace,
 * `".order.shipped"` is a `broadcastAs()` name taken verbatim, and a name with a backslash is a class name as is.
 */
export function wireEventName(event: string, namespace: string | false): string {
    if (event.startsWith(".") || event.startsWith("\\")) return event.slice(1);
    if (event.includes("\\") || namespace === false || namespace === "") return event.replace(/\./g, "\\");
    return (namespace + "." + event).replace(/\./g, "\\");
}
