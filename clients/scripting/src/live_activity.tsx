import {
  LiveActivity,
  LiveActivityUI,
  LiveActivityUIBuilder,
  LiveActivityUIExpandedBottom,
  LiveActivityUIExpandedLeading,
  LiveActivityUIExpandedTrailing,
} from "scripting";
import type { ActivityContent } from "./content";
import { CompactLeading, CompactTrailing, ExpandedBottom, ExpandedLeading, ExpandedTrailing, LockScreen, Minimal } from "./render";

/**
 * The Live Activity's UI. The Scripting app requires the registration in its own file, `live_activity.tsx`: the
 * Live Activity extension runs this file alone (Scripting docs, "LiveActivity" sections 5 and 9.2), so it imports
 * nothing but the renderer.
 */
export const ACTIVITY_NAME = "LanpushActivity";

export const builder: LiveActivityUIBuilder<ActivityContent> = (content) => (
  <LiveActivityUI
    content={<LockScreen content={content} />}
    compactLeading={<CompactLeading content={content} />}
    compactTrailing={<CompactTrailing content={content} />}
    minimal={<Minimal content={content} />}
  >
    <LiveActivityUIExpandedLeading>
      <ExpandedLeading content={content} />
    </LiveActivityUIExpandedLeading>
    <LiveActivityUIExpandedTrailing>
      <ExpandedTrailing content={content} />
    </LiveActivityUIExpandedTrailing>
    <LiveActivityUIExpandedBottom>
      <ExpandedBottom content={content} />
    </LiveActivityUIExpandedBottom>
  </LiveActivityUI>
);

export const LanpushActivity = LiveActivity.register(ACTIVITY_NAME, builder);
