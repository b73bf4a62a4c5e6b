// vue/OrderStatus.test.ts
import { cleanup, render, screen } from "@testing-library/vue";
import * as EchoVue from "laravel-echo-mercure/vue";
import { createTestEcho } from "laravel-echo-mercure/testing";
import { afterEach, expect, it } from "vitest";
import { nextTick } from "vue";
import { OrderStatus } from "./OrderStatus";

afterEach(cleanup);

it("shows the shipment Laravel broadcasts on the order's private channel", async () => {
    const { echo, hub } = createTestEcho({ framework: EchoVue });
    render(OrderStatus, { props: { orderId: 42 } });
    await hub.flush(); // the connector authorizes and subscribes

    expect(hub.joined()).toEqual(["private-orders.42"]);
    hub.broadcast("private-orders.42", "OrderShipped", { order: { id: 42 } });
    await nextTick();

    expect(screen.getByRole("status").textContent).toBe("Order #42 has shipped");
    echo.disconnect();
});
