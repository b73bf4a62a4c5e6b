// What the README's examples assume exists, as "Try it" says: what a Vite app built on Laravel's starter kits
// declares, and `render()` for the reader's own code. Used only by the README check
// (test/e2e/support/readme-blocks.ts); the project's tsconfig excludes it, so nothing else sees these globals.
// Svelte's runes ($props, $state, …), which a Svelte app's <script lang="ts"> sees as globals (README "Svelte").
/// <reference types="svelte" />
import type Echo from "laravel-echo";
import type * as BrowserBuild from "../../../src/iife";

declare global {
    /** Stands for the reader's own rendering code. */
    function render(value: unknown): void;

    /** Vite's `import.meta.env`, with the variable the README's `.env` defines. */
    interface ImportMetaEnv {
        readonly VITE_MERCURE_HUB_URL: string;
    }

    /** Vite's `import.meta`. */
    interface ImportMeta {
        readonly env: ImportMetaEnv;
    }

    /** The app's Echo instance, as the starter kits declare it. */
    interface Window {
        // `any`: the declaration apps use, which a MercureEcho must fit.
        Echo: Echo<any>;
    }

    /** The browser build's global (`<script src="laravel-echo-mercure.iife.js">`). */
    var EchoMercure: typeof BrowserBuild;

    /** Untyped JSX elements, so that `tsx` blocks type-check their own code without a UI library's types. */
    namespace JSX {
        interface IntrinsicElements {
            [element: string]: Record<string, unknown>;
        }
    }
}

export {};
