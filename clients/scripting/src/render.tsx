import { Color, DateLabel, Font, HStack, Image, ProgressView, Spacer, Text, TimerIntervalLabel, VStack, VirtualNode } from "scripting";
import type { Chronometer } from "../../typescript/src/liveActivityRules";
import { ActivityContent, display, Display } from "./content";
import { hasTemplate, TemplateBody, TemplateCompactTrailing, TemplateIcon } from "./templates";

/**
 * A running timer as the iOS companion app draws it (HAActivityTimerProgressBar.swift, `HAActivityChronometerText`):
 * a bounded count-up counts from its start and stops at its end; a countdown counts from now down to its end; once
 * the end has passed, the timer counts up from it.
 */
function Timer({ timer, font, color }: { timer: Chronometer; font: Font; color?: Color }): VirtualNode {
  if (timer.kind === "bounded") {
    return <TimerIntervalLabel from={new Date(timer.start)} to={new Date(timer.end)} countsDown={false} font={font} monospacedDigit={true} foregroundStyle={color} />;
  }
  if (timer.kind === "countdown") {
    return <TimerIntervalLabel from={new Date(Math.min(Date.now(), timer.end))} to={new Date(timer.end)} countsDown={true} font={font} monospacedDigit={true} foregroundStyle={color} />;
  }
  return <DateLabel date={new Date(timer.since)} style="timer" font={font} monospacedDigit={true} foregroundStyle={color} />;
}

/** The message line: the timer when `chronometer` is set, else the message. */
function MessageLine({ d }: { d: Display }): VirtualNode {
  if (d.timer !== undefined) return <Timer timer={d.timer} font="body" color={d.text} />;
  return <Text font="body" lineLimit={2} foregroundStyle={d.text}>{d.message}</Text>;
}

/** The static bar (filled as `progress_bar_direction` says), or a running timer's, which the system animates. */
function Bar({ d, tint }: { d: Display; tint: Color }): VirtualNode | null {
  if (d.fill !== undefined) return <ProgressView value={d.fill} total={1} tint={tint} />;
  if (d.timerBar !== undefined) {
    return <ProgressView timerFrom={new Date(d.timerBar.from)} timerTo={new Date(d.timerBar.to)} countsDown={d.timerBar.countsDown} tint={tint} />;
  }
  return null;
}

function Icon({ d, size }: { d: Display; size: number }): VirtualNode {
  return <Image systemName={d.icon} font={size} foregroundStyle={d.iconColor ?? d.text} />;
}

/** The Lock Screen card: header with icon, title and top-right text; message or timer; the progress bar. */
export function LockScreen({ content }: { content: ActivityContent }): VirtualNode {
  const d = display(content);
  const body = hasTemplate(content) ? (
    <TemplateBody content={content} text={d.text} />
  ) : (
    <VStack alignment="leading" spacing={6}>
      <HStack spacing={8}>
        <Icon d={d} size={18} />
        <Text font="headline" lineLimit={1} foregroundStyle={d.text}>{d.title}</Text>
        <Spacer />
        {d.topRight !== undefined ? <Text font="headline" monospacedDigit={true} foregroundStyle={d.text}>{d.topRight}</Text> : null}
      </HStack>
      <MessageLine d={d} />
      <Bar d={d} tint={d.bar ?? d.text} />
    </VStack>
  );
  return (
    <VStack
      alignment="leading"
      padding={14}
      opacity={content.phase === "ended" ? 0.7 : 1}
      activityBackgroundTint={d.background}
      activitySystemActionForegroundColor={d.text}
      widgetURL={d.url}
    >
      {body}
    </VStack>
  );
}

export function CompactLeading({ content }: { content: ActivityContent }): VirtualNode {
  if (hasTemplate(content)) return <TemplateIcon content={content} size={14} />;
  return <Icon d={display(content)} size={14} />;
}

/** The compact island always shows `critical_text` (companion docs); the system keeps its dark style there. */
export function CompactTrailing({ content }: { content: ActivityContent }): VirtualNode {
  if (hasTemplate(content)) return <TemplateCompactTrailing content={content} />;
  const d = display(content);
  if (d.compactTrailing !== undefined) return <Text font="caption" monospacedDigit={true} foregroundStyle={d.iconColor ?? "white"}>{d.compactTrailing}</Text>;
  if (d.timer !== undefined) return <Timer timer={d.timer} font="caption" />;
  return <Text font="caption">{""}</Text>;
}

export function Minimal({ content }: { content: ActivityContent }): VirtualNode {
  return <CompactLeading content={content} />;
}

/** The expanded island: icon and title leading, the top-right text trailing, message and bar below. */
export function ExpandedLeading({ content }: { content: ActivityContent }): VirtualNode {
  const d = display(content);
  return (
    <HStack spacing={6}>
      <CompactLeading content={content} />
      <Text font="headline" lineLimit={1}>{d.title}</Text>
    </HStack>
  );
}

export function ExpandedTrailing({ content }: { content: ActivityContent }): VirtualNode {
  if (hasTemplate(content)) return <TemplateCompactTrailing content={content} />;
  const d = display(content);
  return <Text font="headline" monospacedDigit={true}>{d.topRight ?? ""}</Text>;
}

export function ExpandedBottom({ content }: { content: ActivityContent }): VirtualNode {
  if (hasTemplate(content)) return <TemplateBody content={content} text="#FFFFFF" />;
  const d = { ...display(content), text: "#FFFFFF" as const };
  return (
    <VStack alignment="leading" spacing={6}>
      <MessageLine d={d} />
      <Bar d={d} tint={d.bar ?? "white"} />
    </VStack>
  );
}
