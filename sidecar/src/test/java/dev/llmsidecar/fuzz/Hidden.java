package dev.llmsidecar.fuzz;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;

/**
 * The event parsers and their records are package-private (each format's package keeps its reading to itself);
 * the fuzz targets all live in one package so that they are found together, and reach them through these handles.
 * A {@link MethodHandle} rethrows what the target throws, unwrapped, so a finding shows the real exception.
 */
final class Hidden {

    private Hidden() {
    }

    static Class<?> type(String name) {
        try {
            return Class.forName(name);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
    }

    static MethodHandle method(Class<?> owner, String name, Class<?>... parameters) {
        try {
            var method = owner.getDeclaredMethod(name, parameters);
            method.setAccessible(true);
            return MethodHandles.lookup().unreflect(method);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static Object staticField(Class<?> owner, String name) {
        try {
            var field = owner.getDeclaredField(name);
            field.setAccessible(true);
            return field.get(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The canonical constructor of a (package-private) record: what a reference reading builds. */
    static MethodHandle recordConstructor(Class<?> record) {
        try {
            Class<?>[] types = Arrays.stream(record.getRecordComponents()).map(RecordComponent::getType)
                    .toArray(Class<?>[]::new);
            var constructor = record.getDeclaredConstructor(types);
            constructor.setAccessible(true);
            return MethodHandles.lookup().unreflectConstructor(constructor);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Calls a handle; whatever it throws is rethrown as is (unchecked), so that it fails the fuzz target. */
    static Object call(MethodHandle handle, Object... arguments) {
        try {
            return handle.invokeWithArguments(arguments);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
