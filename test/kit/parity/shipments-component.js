// A component written without a framework, plain JavaScript that runs as written in Chromium and under happy-dom: it
// lists an order's shipments (a private channel) and the user's notifications, and says when it is listening.
function mountShipments(echo, element, userId) {
    const document = element.ownerDocument;
    const status = document.createElement("p");
    const list = document.createElement("ul");
    status.textContent = "Connecting";
    element.append(status, list);
    const add = (text) => {
        const item = document.createElement("li");
        item.textContent = text;
        list.append(item);
    };
    echo.private("orders.42")
        .subscribed(() => {
            status.textContent = "Listening";
        })
        .listen("OrderShipped", (event) => add("Order #" + event.order.id + " shipped"));
    echo.private("App.Models.User." + userId).notification((notification) => add(notification.title));
}
