public enum LanpushVersion { public static let current = "0.3.0" }
