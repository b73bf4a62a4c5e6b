// react/OrderStatus.test.tsx
import { act, cleanup, render, screen } from "@testing-library/react";
import * as EchoReact from "laravel-echo-mercure/react";
import { createTestEcho } from "laravel-echo-mercure/testing";
import { afterEach, expect, it } from "vitest";
import { OrderStatus } from "./OrderStatus";

afterEach(cleanup);

it("shows the shipment Laravel broadcasts on the order's private channel", async () => {
    const { echo, hub } = createTestEcho({ framework: EchoReact });
    render(<OrderStatus orderId={42} />);
    await act(() => hub.flush()); // the connector authorizes and subscribes

    expect(hub.joined()).toEqual(["private-orders.42"]);
    act(() => {
        hub.broadcast("private-orders.42", "OrderShipped", { order: { id: 42 } });
    });

    expect(screen.getByRole("status").textContent).toBe("Order #42 has shipped");
    echo.disconnect();
});
