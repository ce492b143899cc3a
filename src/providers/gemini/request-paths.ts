import { firstOf, isObj, join, type Obj, type RequestPaths, type Segment, starred, tail } from "../request-paths";

/** A Gemini content group's parts: each canonical part's place (content, part), when the group's parts map one to one. */
function geminiPart(items: readonly unknown[], group: readonly number[], canonical: unknown, n: number): [number, number] | null {
  const places = group.flatMap((c) => {
    const parts = isObj(items[c]) ? (items[c] as Obj).parts : undefined;
    return Array.isArray(parts) ? parts.map((_, p): [number, number] => [c, p]) : [];
  });
  const count = isObj(canonical) && Array.isArray(canonical.parts) ? canonical.parts.length : -1;
  return places.length === count ? (places[n] ?? null) : null;
}

/** Gemini's field names: `contents[i]`, where consecutive model contents are one canonical message. */
export const geminiRequestPaths: RequestPaths = {
  container: "contents",
  groups: (items) => {
    const groups: number[][] = [];
    items.forEach((item, i) => {
      const prev = items[i - 1];
      if (i > 0 && isObj(prev) && isObj(item) && prev.role === "model" && item.role === "model") groups[groups.length - 1].push(i);
      else groups.push([i]);
    });
    return groups;
  },
  name: (place, segments: readonly Segment[]) => {
    const { container, items, group, canonical } = place;
    const [first, item] = firstOf(place);
    if (segments[0] !== "parts" || typeof segments[1] !== "number")
      return group.length === 1 ? join(first, tail(item, segments)) : starred(`${container}[*]`, segments);
    const at = geminiPart(items, group, canonical, segments[1]);
    if (!at) return starred(group.length === 1 ? first : `${container}[*]`, segments);
    const [c, p] = at;
    return join(`${container}[${c}].parts[${p}]`, tail((items[c] as { parts: unknown[] }).parts[p], segments.slice(2), { argsJson: "args" }));
  },
};
