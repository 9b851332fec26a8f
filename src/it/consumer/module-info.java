/** A modular application that uses performance-helpers from the module path. */
module com.example.consumer {
    requires io.github.performancehelpers;
}
