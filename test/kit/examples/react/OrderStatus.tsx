// react/OrderStatus.tsx
import { useState } from "react";
import { useEcho } from "laravel-echo-mercure/react";

export function OrderStatus({ orderId }: { orderId: number }) {
    const [status, setStatus] = useState("Waiting for the warehouse…");
    useEcho<{ order: { id: number } }>(`orders.${orderId}`, "OrderShipped", (event) => {
        setStatus(`Order #${event.order.id} has shipped`);
    });
    return <p role="status">{status}</p>;
}
