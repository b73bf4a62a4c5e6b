// vue/OrderStatus.ts
import { defineComponent, h, ref } from "vue";
import { useEcho } from "laravel-echo-mercure/vue";

export const OrderStatus = defineComponent({
    props: { orderId: { type: Number, required: true } },
    setup(props) {
        const status = ref("Waiting for the warehouse…");
        useEcho<{ order: { id: number } }>(`orders.${props.orderId}`, "OrderShipped", (event) => {
            status.value = `Order #${event.order.id} has shipped`;
        });
        return () => h("p", { role: "status" }, status.value);
    },
});
