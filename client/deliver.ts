export { deliver, notificationDelivery } from '../activities/notifications/deliver';
export type { DeliverNotificationInput, NotificationDelivery } from '../shared/notifications/delivery';
