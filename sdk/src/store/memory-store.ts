import { keyString } from "../steps.js";
import type { SkillKey, Trajectory, TrajectoryStore } from "../types.js";

/**
 * Keeps trajectories in process memory. Trajectories are copied in and out, so
 * what the engine reads back is exactly what a remote store would give it.
 * `dump()` and the constructor let you persist them yourself.
 *
 * @example
 * const store = new MemoryStore();
 * await fs.writeFile("skills.json", JSON.stringify(store.dump()));
 * const restored = new MemoryStore(JSON.parse(await fs.readFile("skills.json", "utf8")));
 */
export class MemoryStore implements TrajectoryStore {
  private readonly byKey = new Map<string, Trajectory[]>();

  constructor(initial: readonly Trajectory[] = []) {
    for (const trajectory of initial) this.insert(trajectory);
  }

  async query(key: SkillKey): Promise<Trajectory[]> {
    return (this.byKey.get(keyString(key)) ?? []).map(copy);
  }

  async add(trajectory: Trajectory): Promise<void> {
    this.insert(trajectory);
  }

  /** Every stored trajectory, as plain JSON-safe data. */
  dump(): Trajectory[] {
    return [...this.byKey.values()].flat().map(copy);
  }

  /** How many trajectories are stored. */
  get size(): number {
    let n = 0;
    for (const list of this.byKey.values()) n += list.length;
    return n;
  }

  private insert(trajectory: Trajectory): void {
    const k = keyString(trajectory.key);
    const list = this.byKey.get(k) ?? [];
    list.push(copy(trajectory));
    this.byKey.set(k, list);
  }
}

function copy(trajectory: Trajectory): Trajectory {
  return JSON.parse(JSON.stringify(trajectory)) as Trajectory;
}
