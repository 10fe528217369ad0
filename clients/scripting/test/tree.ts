import type { Rendered } from "./fakeScripting.js";

/** Every element of a rendered tree, depth first, including views passed as props (Live Activity regions). */
export function all(node: Rendered | string | null | undefined): Rendered[] {
  if (!node || typeof node === "string") return [];
  const out: Rendered[] = [node];
  for (const value of Object.values(node.props)) {
    if (value && typeof value === "object" && "type" in value && "children" in value) out.push(...all(value as Rendered));
  }
  for (const c of node.children) out.push(...all(c));
  return out;
}

/** The texts shown in a tree, in order. */
export function texts(node: Rendered | null | undefined): string[] {
  return all(node).filter((n) => n.type === "Text").map((n) => n.children.join(""));
}

export function ofType(node: Rendered | null | undefined, type: string): Rendered[] {
  return all(node).filter((n) => n.type === type);
}

/** The Live Activity region passed to `LiveActivityUI` as `name` (`content`, `compactTrailing`, …). */
export function region(tree: Rendered, name: string): Rendered {
  const ui = all(tree).find((n) => n.type === "LiveActivityUI");
  if (!ui) throw new Error("no LiveActivityUI in the tree");
  return ui.props[name] as Rendered;
}
