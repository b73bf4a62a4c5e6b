import type { MercureEchoOptions } from "../index";

/**
 * `import.meta` as Vite gives it: `env` holds the app's `VITE_*` variables (Vite replaces the expression at build
 * time, in dependencies too); elsewhere (Node.js, a bundler without it) `env` is undefined.
 */
interface ImportMetaWithEnv {
    readonly env?: { readonly VITE_MERCURE_HUB_URL?: unknown };
}

/**
 * The hub URL the app's `.env` gives as `VITE_MERCURE_HUB_URL` (the variable `php artisan install:broadcasting
 * --mercure` writes), or undefined when it is not defined or empty, or when there is no `import.meta.env`.
 */
export function viteHubUrl(): string | undefined {
    // Written out in full (the casts vanish from the built file, as dist/react/index.js shows) so that Vite's
    // define replaces each expression, as it does in @laravel/echo-react's own defaults.
    const value = (import.meta as ImportMetaWithEnv).env === undefined ? undefined : (import.meta as ImportMetaWithEnv).env!.VITE_MERCURE_HUB_URL;
    return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The options handed to the framework package: `host` filled unless the app gave `host` or `discover` itself
 * (`host: null` keeps the connector's own lookup, `<link rel="mercure">` first): `VITE_MERCURE_HUB_URL` when
 * defined, else `/.well-known/mercure` on the page's origin, else (no `location`: server-side rendering)
 * nothing, and the connector reports `missing_platform` at first use. Every other option passes through.
 */
export function withHubHost(options: MercureEchoOptions, fromEnv: string | undefined = viteHubUrl()): MercureEchoOptions {
    if ("host" in options || "discover" in options) return { ...options };
    const page = (globalThis as { location?: { href: string } }).location;
    const host = fromEnv ?? (page === undefined ? undefined : new URL("/.well-known/mercure", page.href).href);
    return host === undefined ? { ...options } : { ...options, host };
}
