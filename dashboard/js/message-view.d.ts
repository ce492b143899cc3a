// Types of message-view.js for the TypeScript tests that import it (the dashboard itself is plain JS with @ts-check).
export interface Call {
  name: string;
  id: string;
  args: string;
}
export interface Result {
  id: string;
  text: string;
}
export interface MessageView {
  texts: string[];
  calls: Call[];
  results: Result[];
  refusals: string[];
}
export function messageView(node: { view?: unknown }): MessageView;
