public enum LanpushVersion { public static let current = "0.1.0" }
