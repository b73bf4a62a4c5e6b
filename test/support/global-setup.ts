import { prepareReferenceHubs } from "./reference-hub";

/** Once per test run, before any suite: build the reference hubs (cached), or warn locally without Go. */
export default function setup(): void {
    prepareReferenceHubs();
}
