/**
 * The refund desk's orders in the templates-on-every-API tests (unit and worker): three that teach a template
 * (an order id and an email the model copies into its call) and a fourth it must serve with its own values.
 */
export const ORDERS = [
  ["A-1001", "ada@example.com"],
  ["B-2002", "bob@example.org"],
  ["C-3003", "cyd@example.net"],
] as const;
export const FOURTH = ["D-4004", "dan@example.io"] as const;
