import { DateLabel, HStack, Image, ProgressView, Spacer, Text, VStack, VirtualNode } from "scripting";
import { ActivityContent, display, Display } from "./content";
import { hasTemplate, TemplateBody, TemplateCompactTrailing, TemplateIcon } from "./templates";

/** The message line: a live timer to `countdown_end` when `chronometer` is set (it counts up once past), else the message. */
function MessageLine({ d }: { d: Display }): VirtualNode {
  if (d.timer !== undefined) {
    return <DateLabel date={new Date(d.timer)} style="timer" font="body" monospacedDigit={true} foregroundStyle={d.text} />;
  }
  return <Text font="body" lineLimit={2} foregroundStyle={d.text}>{d.message}</Text>;
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
      {d.fraction !== undefined ? <ProgressView value={d.fraction} total={1} tint={d.bar ?? d.text} /> : null}
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
  if (d.timer !== undefined) return <DateLabel date={new Date(d.timer)} style="timer" font="caption" monospacedDigit={true} />;
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
      {d.fraction !== undefined ? <ProgressView value={d.fraction} total={1} tint={d.bar ?? "white"} /> : null}
    </VStack>
  );
}
