public enum LanpushVersion { public static let current = "0.2.0" }
