// The module a Vite app's TypeScript sees for its Vue components (what Vue's tooling declares), for the entry of the
// docs' Vue app (`import Order from "./Order.vue"`; Svelte's own types declare `*.svelte`). A script, not a module:
// wildcard module declarations must be ambient. Used by the README check and by the consumer apps' type check (test/consumer/).
declare module "*.vue" {
    import type { DefineComponent } from "vue";
    const component: DefineComponent;
    export default component;
}
