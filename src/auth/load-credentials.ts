import { lazyChunk } from "../lazy-chunk";

/** What the lazily loaded credentials chunk offers: `./credentials`'s exports. */
export type CredentialsModule = typeof import("./credentials");

/**
 * Load the code that reads the auth request's credentials at each request, once per page (a separate chunk in the ESM
 * and CJS builds): only a connector with a credential function, a page without a CSRF token but with Laravel's
 * `XSRF-TOKEN` cookie, or a 419 needs it.
 */
export const loadCredentials: () => Promise<CredentialsModule> = lazyChunk(() => import("./credentials"));
