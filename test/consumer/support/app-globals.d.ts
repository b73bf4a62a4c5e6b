// What the docs' examples assume an app has, for the consumer apps' type check (test/consumer/apps.test.ts), which
// compiles them against the installed package: Vite's `import.meta.env` (vite/client) with the README's variable,
// Svelte's runes, and `render()` standing for the reader's own code. `window.Echo`'s declaration is the README's own
// block (resources/js/types/global.d.ts), compiled with the others: not declared here.
// The browser build's global is typed as the package's API, which it is (`<script src="laravel-echo-mercure.iife.js">`).
/// <reference types="vite/client" />
/// <reference types="svelte" />
import type Echo from "laravel-echo";
import type * as Mercure from "laravel-echo-mercure";

declare global {
    function render(value: unknown): void;

    interface ImportMetaEnv {
        readonly VITE_MERCURE_HUB_URL: string;
    }

    var EchoMercure: Pick<typeof Mercure, "MercureConnector" | "MercureEcho" | "MercureError" | "encryptedPrivate"> & { Echo: typeof Echo };
}

export {};
