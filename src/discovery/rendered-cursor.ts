/*
 * The page's rendered cursor for a hub the connector did not discover (the `host` option): the `last-event-id` of a
 * `<link rel="mercure">` in the page's `<head>` that names the same hub (mercure-hub §5). The server rendered it with
 * the hub's last event id at the time, so a first stream that starts from it receives every event published after
 * the render, once, and nothing from before, however long the page's scripts take to join. Discovery reads the
 * same attribute from the link it follows (see `discoverFromDocument`); this small reader is in the core because the
 * discovery chunk is never loaded when `host` is given. It is read when the connector is created: the page as the
 * server rendered it.
 */

/**
 * The `last-event-id` of the first `<link rel="mercure">` in the page's `<head>` whose `href` resolves to `host`
 * (resolved against the page's address, as the connector resolves it; fragments aside); undefined when there is none,
 * when it is empty, outside a page, or when the document's members are shadowed (DOM clobbering). Only `<head>`
 * counts, as for discovery: a link in `<body>` is not the server's.
 */
export function renderedCursor(host: string): string | undefined {
    try {
        const hub = new URL(host, location.href).href.split("#")[0];
        // [spec] mercure-hub §5: rel tokens are case-insensitive; the element's `href` is resolved by the browser.
        for (const link of document.querySelectorAll<HTMLLinkElement>("head>link[rel~='mercure' i][last-event-id]")) {
            if (link.href.split("#")[0] === hub) return link.getAttribute("last-event-id") || undefined;
        }
    } catch {
        // Outside a page, or a clobbered document: no rendered cursor.
    }
}
