import { newApp } from "./app";

export { TreeWriter } from "./store/tree-writer";

const app = newApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
