/** A modular application that tries to use the library's non-exported package: must not compile. */
module com.example.sneaky {
    requires io.github.performancehelpers;
}
