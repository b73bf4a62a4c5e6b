import { MercureError } from "./index";

/*
 * What `pusher-js` resolves to in a Mercure-only app built with the `laravel-echo-mercure/vite` plugin README's
 * "React" and "Vue" sections show, or the alias it sets (`resolve: { alias: { "pusher-js": "laravel-echo-mercure/no-pusher" } }`). `@laravel/echo-react` and
 * `@laravel/echo-vue` 2.5.0 import `pusher-js` at module top and only ever construct it for the pusher, reverb
 * and ably broadcasters; with the Mercure connector they store this class as the `Pusher` option and never
 * call it, so the app ships these few lines instead of pusher-js.
 */

/**
 * Stands in for the `Pusher` client: constructing it throws a `MercureError` (`unsupported`) that says to remove
 * the alias, since only a pusher, reverb or ably broadcaster constructs it.
 */
export default class NoPusher {
    /** Throw: this app aliased `pusher-js` away. */
    constructor() {
        throw new MercureError(
            "unsupported",
            `pusher-js is aliased to laravel-echo-mercure/no-pusher in this app's bundler configuration; to use the pusher, reverb or ably broadcaster, install pusher-js (the laravel-echo-mercure/vite plugin then leaves it alone) or remove the alias (resolve.alias "pusher-js").`,
        );
    }
}
